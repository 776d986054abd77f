"""A small POSIX shell reader: words, operators, redirections and here-documents.

``shlex`` gets quoting right but throws away what replay needs most: whether ``2>`` was one
token (a stderr redirect) or an argument ``2`` followed by ``>``, whether a word held an
unquoted ``$`` or glob, and here-document bodies, which it does not know at all. So the split
into words and operators is done here, and quote removal inside a word follows shlex's POSIX
rules. Nothing is expanded or executed: a word that needs expansion is marked, and callers
treat its value as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPERATORS = ("&&", "||", ";;", "|&", "&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>")
_SINGLE = set(";|&<>()")
_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<", "<<", "<<-", "<<<", ">&", "<&", "<>"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
# Reserved words that only open or close a compound command; the commands inside still run.
_PREFIX_WORDS = {"if", "then", "elif", "else", "do", "while", "until", "!", "{", "time"}
_CLOSING_WORDS = {"fi", "done", "}", "esac"}


@dataclass(frozen=True, slots=True)
class Word:
    value: str  # after quote removal; expansions are left verbatim
    raw: str
    expands: bool = False  # $var, $(…), `…`, ${…}, $'…', <(…): the value is not literal
    glob: bool = False  # unquoted * ? [
    brace: bool = False  # unquoted {a,b} or {1..3}
    tilde: bool = False  # unquoted leading ~

    @property
    def literal(self) -> bool:
        return not (self.expands or self.glob or self.brace or self.tilde)


@dataclass(frozen=True, slots=True)
class HereDoc:
    body: str
    expands: bool  # unquoted delimiter and the body holds $ ` or \ : not literal
    complete: bool  # the closing delimiter line was found


@dataclass(frozen=True, slots=True)
class Redirect:
    fd: int | None
    op: str
    target: Word | None = None
    heredoc: HereDoc | None = None


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    argv: tuple[Word, ...] = ()
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    # Set when the shell construct is beyond this reader (case, functions, for-loop headers):
    # callers must not assume anything about what it does.
    opaque: str | None = None
    for_header: bool = False

    @property
    def args(self) -> list[str]:
        return [w.value for w in self.argv]


# A parsed script is a flat list of commands and control operators
# ("&&", "||", ";", "&", "|", "|&", "(", ")"); a newline is reported as ";".
Item = SimpleCommand | str


@dataclass
class _Token:
    kind: str  # "word" | "op" | "redirect"
    text: str
    word: Word | None = None
    fd: int | None = None
    heredoc: list[HereDoc] = field(default_factory=list)


class _Lexer:
    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0
        self.tokens: list[_Token] = []
        self.pending: list[tuple[_Token, str, bool, bool]] = []  # token, delim, quoted, strip

    def run(self) -> list[_Token]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c in " \t\r":
                self.i += 1
            elif c == "\n":
                self.tokens.append(_Token("op", ";"))
                self.i += 1
                self._read_heredocs()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif c in "<>" and s.startswith("(", self.i + 1):
                start = self.i
                self.i = _skip_balanced(s, self.i + 1, "(", ")")
                raw = s[start : self.i]
                self.tokens.append(_Token("word", raw, Word(raw, raw, expands=True)))
            elif c in _SINGLE:
                self._operator(None)
            elif c.isdigit() and self._fd_redirect():
                pass
            else:
                word = self._word()
                self.tokens.append(_Token("word", word.raw, word))
        self._read_heredocs()
        return self.tokens

    def _fd_redirect(self) -> bool:
        m = re.compile(r"\d+(?=[<>])").match(self.s, self.i)
        if not m:
            return False
        self.i = m.end()
        self._operator(int(m.group()))
        return True

    def _operator(self, fd: int | None) -> None:
        s = self.s
        op = next((o for o in _OPERATORS if s.startswith(o, self.i)), s[self.i])
        self.i += len(op)
        if op in _REDIRECTS:
            token = _Token("redirect", op, fd=fd)
            self.tokens.append(token)
            if op in ("<<", "<<-"):
                while self.i < len(s) and s[self.i] in " \t":
                    self.i += 1
                delimiter = self._word()
                quoted = delimiter.raw != delimiter.value or "\\" in delimiter.raw
                self.pending.append((token, delimiter.value, quoted, op == "<<-"))
        else:
            self.tokens.append(_Token("op", op))

    def _read_heredocs(self) -> None:
        s = self.s
        for token, delimiter, quoted, strip in self.pending:
            lines: list[str] = []
            complete = False
            while self.i < len(s):
                end = s.find("\n", self.i)
                line = s[self.i :] if end < 0 else s[self.i : end]
                self.i = len(s) if end < 0 else end + 1
                if strip:
                    line = line.lstrip("\t")
                if line == delimiter:
                    complete = True
                    break
                lines.append(line)
            body = "".join(line + "\n" for line in lines)
            expands = not quoted and bool(re.search(r"[$`\\]", body))
            token.heredoc.append(HereDoc(body, expands, complete))
        self.pending.clear()

    def _word(self) -> Word:
        s = self.s
        start = self.i
        out: list[str] = []
        expands = glob = brace = False
        tilde = s.startswith("~", start)
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r\n" or c in _SINGLE:
                break
            if c == "'":
                end = s.find("'", self.i + 1)
                end = len(s) if end < 0 else end
                out.append(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                self.i += 1
                while self.i < len(s) and s[self.i] != '"':
                    d = s[self.i]
                    if d == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                        if s[self.i + 1] != "\n":
                            out.append(s[self.i + 1])
                        self.i += 2
                    elif d in "$`":
                        expands |= self._expansion(out)
                    else:
                        out.append(d)
                        self.i += 1
                self.i += 1
            elif c == "\\":
                if self.i + 1 < len(s) and s[self.i + 1] != "\n":
                    out.append(s[self.i + 1])
                self.i += 2
            elif c in "$`":
                expands |= self._expansion(out)
            else:
                if c in "*?" or (c == "[" and re.match(r"\[[^\]/\s]+\]", s[self.i :])):
                    glob = True
                elif c == "{" and re.match(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}", s[self.i :]):
                    brace = True
                out.append(c)
                self.i += 1
        raw = s[start : self.i]
        return Word("".join(out), raw, expands=expands, glob=glob, brace=brace, tilde=tilde)

    def _expansion(self, out: list[str]) -> bool:
        """Copy one $… or `…` expansion verbatim into ``out``; True when it really expands."""
        s = self.s
        start = self.i
        if s[start] == "`":
            end = start + 1
            while end < len(s) and s[end] != "`":
                end += 2 if s[end] == "\\" else 1
            self.i = min(end + 1, len(s))
        elif s.startswith("$(", start):
            self.i = _skip_balanced(s, start + 1, "(", ")")
        elif s.startswith("${", start):
            self.i = _skip_balanced(s, start + 1, "{", "}")
        elif s.startswith("$'", start):
            end = start + 2
            while end < len(s) and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            self.i = min(end + 1, len(s))
        else:
            m = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9?#$!@*-])").match(s, start)
            if not m:  # a lone "$" is a literal dollar sign
                out.append("$")
                self.i += 1
                return False
            self.i = m.end()
        out.append(s[start : self.i])
        return True


def _skip_balanced(s: str, i: int, open_: str, close: str) -> int:
    """Index just past the ``close`` matching the ``open_`` at ``i``, honouring quotes."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = s.find("'", i + 1)
            i = len(s) if end < 0 else end + 1
            continue
        if c == '"':
            i += 1
            while i < len(s) and s[i] != '"':
                i += 2 if s[i] == "\\" else 1
            i += 1
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(s)


def parse(script: str) -> list[Item]:
    """Split a command line into simple commands and the operators between them."""
    tokens = _Lexer(script).run()
    items: list[Item] = []
    argv: list[Word] = []
    assignments: list[Word] = []
    redirects: list[Redirect] = []
    opaque: str | None = None
    for_header = False
    i = 0

    def flush() -> None:
        nonlocal argv, assignments, redirects, opaque, for_header
        if argv or assignments or redirects or opaque:
            items.append(
                SimpleCommand(tuple(argv), tuple(assignments), tuple(redirects), opaque, for_header)
            )
        argv, assignments, redirects, opaque, for_header = [], [], [], None, False

    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token.kind == "op":
            if token.text == "(" and argv and not redirects:
                # `name() { …; }`: a function definition; its body runs only when called.
                opaque = "function definition"
                continue
            if token.text == ")" and opaque == "function definition":
                continue
            flush()
            items.append(token.text)
            continue
        if token.kind == "redirect":
            target: Word | None = None
            heredoc = token.heredoc[0] if token.heredoc else None
            if heredoc is None and i < len(tokens) and tokens[i].kind == "word":
                target = tokens[i].word
                i += 1
            redirects.append(Redirect(token.fd, token.text, target, heredoc))
            continue
        word = token.word
        assert word is not None
        bare = word.raw == word.value  # reserved words count only when unquoted
        if not argv and not assignments and not redirects and bare:
            if word.value in _PREFIX_WORDS or word.value in _CLOSING_WORDS:
                continue
            if word.value == "case":
                # Branches of a case statement run conditionally on patterns; skip to esac.
                while i < len(tokens) and not (
                    tokens[i].kind == "word" and tokens[i].text == "esac"
                ):
                    i += 1
                i += 1
                opaque = "case statement"
                flush()
                continue
            if word.value in ("for", "select"):
                for_header = True
            elif word.value == "function":
                opaque = "function definition"
        if not argv and _ASSIGNMENT.match(word.value) and not word.value.startswith("="):
            assignments.append(word)
            continue
        argv.append(word)
    flush()
    return items
