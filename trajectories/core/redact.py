"""One redactor for everything the product shows or writes: pages, task files, training exports.

>>> r = redact("export OPENAI_API_KEY=sk-proj-" + "a1B2" * 8 + "  # mail me: ann@corp.eu")
>>> r.value
'export OPENAI_API_KEY=[REDACTED:openai_api_key]  # mail me: [REDACTED:email]'
>>> r.counts
{'email': 1, 'openai_api_key': 1}
>>> redact_data({"password": "hunter2", "cmd": ["echo", "ok"]}).value
{'password': '[REDACTED:secret_assignment]', 'cmd': ['echo', 'ok']}
>>> still_has_secrets(r.value)
()

Built on detect-secrets' maintained provider patterns (its regex plugins' ``denylist``, used for
their spans rather than through its file scanner, which reports values without positions and
reads its settings from a baseline) plus what it misses or stops short on: newer token shapes
(OpenAI ``sk-proj-``, Anthropic, GitHub ``github_pat_``, Hugging Face, npm, Google, Stripe keys
longer than its 24 characters), whole JWTs (its pattern ends before the signature), bearer
headers, private-key blocks (it matches only the BEGIN line; here also quoted, commented,
numbered by a file viewer or cut at either end), AWS secret keys it needs quotes for (named or
bare beside their key id, and the columns of the console's credential CSVs), database clients'
passwords (``mysql -pSECRET``, ``PGPASSWORD=``) and other programs' password arguments
(``sshpass -p``, ``docker login -p``, ``redis-cli -a``, ``.netrc``), authenticating curl headers,
passwords in URLs and ``curl -u``,
``.env``-style assignments and e-mail addresses (but not those at the domains reserved for
examples, which fill test fixtures). Its entropy and keyword plugins are left out on
purpose: they flag every git sha and much ordinary code, and a redactor that rewrites code in
training data teaches the wrong thing. Overlapping findings merge into one replacement typed by
the most specific rule, so no fragment of a secret survives between two partial matches.

Replacements are deterministic (``[REDACTED:<type>]``, followed by the line breaks of a secret
that spans lines) and leave every other character as it was.
Speed comes from the shape of the patterns, not from skipping text: each starts with a literal
(left boundaries are checked in code, since a leading lookbehind disables the regex engine's
literal search), case-insensitive ones run on the lowercased text, repeats are bounded, and a rule
whose marker is absent does not run (benchmarks/bench_redact.py measures MB/s).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from detect_secrets.filters.heuristic import (
    is_not_alphanumeric_string,
    is_prefixed_with_dollar_sign,
    is_templated_secret,
)
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

TOKEN = "[REDACTED:{}]"
_TOKEN_RE = re.compile(r"\[redacted:[a-z0-9_]+\]")  # matched on the lowercased text

# (text, match, start, end) of a finding -> keep it? The match is on the text the rule ran on.
Validator = Callable[[str, re.Match[str], int, int], bool]


@dataclass(frozen=True)
class Redacted[T]:
    """What came out of the redactor, and how many replacements of each type it made."""

    value: T
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class _Rule:
    kind: str  # the type in the replacement token and in the counts
    pattern: re.Pattern[str]
    # The part of the match that is secret (for alternatives, the first group that took part);
    # the rest of the match, quotes included, stays as it was.
    group: int | str | tuple[str, ...] = 0
    # Lowercase literals one of which must occur for the rule to run, for patterns that cannot
    # start with a literal (the others find their prefix as fast as a substring test would).
    hints: tuple[str, ...] = ()
    folded: bool = False  # the pattern is lowercase and runs on the lowercased text
    not_after: str = ""  # characters that must not precede the match (a left boundary)
    extend_left: str = ""  # characters the finding extends over to its left (up to 64)
    keep: Validator | None = None
    # The findings' spans worked out from the match, when they are not a part of it (a block
    # whose lines are walked in code, the columns of the rows under a header).
    widen: Callable[[str, re.Match[str]], Sequence[tuple[int, int]]] | None = None


_TOKEN_CHARS = string.ascii_letters + string.digits + "_-"
_LOCAL_PART = string.ascii_letters + string.digits + "._%+-"

_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false undefined required optional str string int secret password "
    "token redacted hidden masked example changeme_later your_token your_password".split()
)
_CODE_VALUE = re.compile(
    r"[()\[\]{}<>$`]|^(?:os\.environ|os\.getenv|process\.env|env\.|self\.|settings\.)"
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"
)


def _plausible_value(value: str) -> bool:
    """Whether an assigned value could be a secret rather than a placeholder or a piece of code
    (detect-secrets' own false-positive filters, then ours)."""
    v = value.strip().strip("\"'")
    if len(v) < 2 or v.startswith("[REDACTED:"):
        return False
    if is_templated_secret(v) or is_prefixed_with_dollar_sign(v) or is_not_alphanumeric_string(v):
        return False
    if v.lower() in _PLACEHOLDER_WORDS or set(v.lower()) <= {"x", "*", ".", "-"}:
        return False
    return not _CODE_VALUE.search(v)


def _value_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    return _plausible_value(text[start:end])


_YAML_KEY_LINE = re.compile(r"[ \t]*(?:-[ \t]+)?[A-Za-z0-9_.\-]*$")


# An unquoted value that is a keyword, or is followed by a call, is code: `const apiKey = await
# getKey(model)`, `token = new Token()`, `secret = yield load()`.
_CODE_WORDS = frozenset(
    "await new yield typeof void delete async function lambda not return".split()
)
_CALL_AFTER = re.compile(r"[ \t]*[A-Za-z_$][\w$.]*[ \t]*\(")


def _assignment_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    if m.lastgroup == "v3" and (
        text[start:end] in _CODE_WORDS or _CALL_AFTER.match(text, end) is not None
    ):
        return False
    if m.lastgroup == "y":
        # An unquoted `name: value` counts only as a config line, its key first on the line, so
        # prose such as "Password: hunter" keeps its words.
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not _YAML_KEY_LINE.match(text, line_start, m.start()):
            return False
    return _plausible_value(text[start:end])


# Domains reserved for documentation and tests (RFC 2606, RFC 6761): nobody's address.
_RESERVED_DOMAIN = re.compile(
    r"@(?:[a-z0-9\-]+\.)*(?:example\.(?:com|net|org)|[a-z0-9\-]+\.(?:example|test|invalid|localhost))$"
)


def _email_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    if text.startswith(":", end):
        return False  # git@github.com:owner/repo is a remote, not a person
    if _RESERVED_DOMAIN.search(m.group(0)):
        return False  # user@example.com in a test fixture
    # In scheme://user:password@host the password is the URL rule's and the host no address.
    before = text[max(0, start - 300) : start]
    return re.search(r"://[^\s/@]*:$", before) is None


def _jwt_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    return bool(JwtTokenDetector.is_formally_valid(text[start:end]))


def _bearer_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    """A bearer value is a credential when it looks like one (digits, or long): "Bearer
    authentication_scheme" in prose is not."""
    value = text[start:end]
    return len(value) >= 32 or any(ch.isdigit() for ch in value)


# -- private-key blocks as logs carry them ----------------------------------------------------

_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END_MARK = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# A line of a key's body: a file viewer's line-number gutter (Claude Code's Read tool, also
# JSON-escaped), quote, comment and string decoration, at most one base64 run, and the string
# decoration that may follow it (`"...\n",`, `'...' +`).
_KEY_DECOR = r"[ \t>#/*;|\"'+\\,]*"
_KEY_LINE = re.compile(
    r"[ \t]*(?:\d{1,7}(?:\u2192|\\u2192|\t|\\t))?"
    + _KEY_DECOR
    + r"(?:(?P<run>[A-Za-z0-9+/=]{1,1024})[ \t\"',+\\;)]*)?"
)
_KEY_HEADER = re.compile(_KEY_DECOR + r"[A-Za-z][A-Za-z\-]{1,30}:[ \t][^\r\n]{0,256}")
_KEY_END = re.compile(_KEY_DECOR + r"(?P<run>[A-Za-z0-9+/=]{0,1024})" + _KEY_END_MARK.pattern)
# A body pasted on one line with its breaks turned into spaces: a first chunk longer than any
# word (prose after a marker is not a key), then the line-long chunks. Base64 reads the same
# backwards, so the tail before an END marker is matched on the reversed line.
_KEY_INLINE = re.compile(r"[ \t]?[A-Za-z0-9+/=]{32,1024}+(?:[ \t][A-Za-z0-9+/=]{16,1024}+){0,64}+")
_KEY_INLINE_TAIL = re.compile(
    r"[ \t]?(?:[A-Za-z0-9+/=]{1,1024}+[ \t])?[A-Za-z0-9+/=]{32,1024}+"
    r"(?:[ \t][A-Za-z0-9+/=]{16,1024}+){0,64}+"
)
_KEY_LINE_MAX = 1100  # longer lines are not a key's (real ones are 64 or 70 characters)
_KEY_REACH = 32_768  # a walk stops this far from its marker (an 8192-bit RSA key is 6.5 KB)
_KEY_MIN_BODY = 32  # fewer base64 characters is code naming the markers, not a key


def _key_after_begin(text: str, m: re.Match[str]) -> Sequence[tuple[int, int]]:
    """From a BEGIN marker over the body to its END marker, or to the last body line when the
    block was cut before its end."""
    pos, limit = m.end(), min(len(text), m.end() + _KEY_REACH)
    body, last, in_headers = 0, m.end(), True
    while True:
        brk = _next_break(text, pos, limit)
        stop = brk[0] if brk else min(limit, pos + _KEY_LINE_MAX)
        end = _KEY_END.match(text, pos, stop)
        if end is not None:
            body += len(end.group("run"))
            return [(m.start(), end.end())] if body >= _KEY_MIN_BODY else []
        line = _KEY_LINE.fullmatch(text, pos, stop)
        if line is not None and line.group("run"):
            body += len(line.group("run"))
            last, in_headers = line.end("run"), False
        elif line is None:
            inline = _KEY_INLINE.match(text, pos) if pos == m.end() else None
            if inline is not None:
                return [(m.start(), inline.end())]
            if not (in_headers and _KEY_HEADER.fullmatch(text, pos, stop)):
                break  # Proc-Type:, DEK-Info:, Version: come before the body
        if brk is None:
            break
        pos = brk[1]
    return [(m.start(), last)] if body >= _KEY_MIN_BODY else []


# Line breaks are real or escaped (a key inside a JSON string), and found with str.find: a
# regex alternation of them would step through every character of a long line. Both searches
# look one line's length at most, so walking over many short lines stays linear.


def _next_break(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """The span of the first line break in text[lo:hi]."""
    hi = min(hi, lo + _KEY_LINE_MAX)
    found = [i for i in (text.find(c, lo, hi) for c in ("\n", "\r", "\\n")) if i >= 0]
    if not found:
        return None
    i = min(found)
    if text.startswith("\r\n", i):
        return (i, i + 2)
    if text.startswith("\\n", i):
        return (i - 2 if i - 2 >= lo and text.startswith("\\r", i - 2) else i, i + 2)
    return (i, i + 1)


def _previous_break(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """The span of the last line break in text[lo:hi]."""
    lo = max(lo, hi - _KEY_LINE_MAX)
    end = max(text.rfind("\n", lo, hi) + 1, text.rfind("\r", lo, hi) + 1)
    escaped = text.rfind("\\n", lo, hi)
    if escaped >= 0 and escaped + 2 > end:
        first = (
            escaped - 2 if escaped - 2 >= lo and text.startswith("\\r", escaped - 2) else escaped
        )
        return (first, escaped + 2)
    if end == 0:
        return None
    first = end - 2 if end - 2 >= lo and text.startswith("\r\n", end - 2) else end - 1
    return (first, end)


def _key_before_end(text: str, m: re.Match[str]) -> Sequence[tuple[int, int]]:
    """From an END marker back over the body before it: the tail of a block whose head was cut
    off (a whole block is the forward walk's finding too, and the two merge)."""
    lo = max(0, m.start() - _KEY_REACH)
    hi, start, body = m.start(), -1, 0
    while True:
        brk = _previous_break(text, lo, hi)
        if brk is None and (lo > 0 or hi - lo > _KEY_LINE_MAX):
            break  # a line longer than any key's, or the walk's reach
        line_start = brk[1] if brk else lo
        line = _KEY_LINE.fullmatch(text, line_start, hi)
        if line is None:
            if hi == m.start():  # the END marker's own line: a body pasted on one line?
                tail = _KEY_INLINE_TAIL.match(text[line_start:hi][::-1])
                if tail is not None:
                    return [(hi - tail.end(), m.end())]
            break
        if line.group("run"):
            body += len(line.group("run"))
            start = line.start("run")
        if brk is None:
            break
        hi = brk[0]
    return [(start, m.end())] if body >= _KEY_MIN_BODY else []


# -- secrets known by what stands near them ------------------------------------------------------

_AWS_KEY_ID = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])")
_AWS_SECRET_SHAPE = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_NEAR = 256  # how far from its key id a bare secret is looked for, either side


def _aws_secret_near_id(text: str, m: re.Match[str]) -> Sequence[tuple[int, int]]:
    """The 40-character secret access key nearest an access key id, named or not ("key
    AKIA... and secret wJalr..."), when it looks like one: mixed case, unlike a git sha, a
    constant or a lowercase path."""
    lo, hi = max(0, m.start() - _AWS_NEAR), min(len(text), m.end() + _AWS_NEAR)
    best: tuple[int, int] | None = None
    for found in _AWS_SECRET_SHAPE.finditer(text, lo, hi):
        value = found.group(0)
        if found.start() < m.end() and m.start() < found.end():
            continue
        if value.lower() == value or value.upper() == value:
            continue
        distance = found.start() - m.end() if found.start() >= m.end() else m.start() - found.end()
        if best is None or distance < best[0]:
            best = (distance, found.start())
    return [(best[1], best[1] + 40)] if best is not None else []


# The AWS console's credential downloads: a CSV header, then one row per user or key. The
# secret columns are found by their header names, so a column added or moved keeps its place.
_AWS_CSV_HEADER = re.compile(r"user name,password|access key id,secret access key")
# What may stand before a CSV line: a viewer's line-number gutter, or the opening of the string
# that holds the file (a JSON-escaped tool output).
_CSV_LINE_PREFIX = re.compile(
    r"(?:[ \t]*(?:\d{1,7}(?:\u2192|\\u2192|\t|\\t))?|[^\r\n]{0,256}?[\"'])\ufeff?"
)
_CSV_ROWS = 100


def _csv_fields(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The spans of a CSV line's fields (inside their quotes when quoted)."""
    fields: list[tuple[int, int]] = []
    pos = lo
    while True:
        if text.startswith('"', pos):
            close = pos + 1
            while (q := text.find('"', close, hi)) >= 0 and text.startswith('""', q):
                close = q + 2
            if q < 0:
                return [*fields, (pos + 1, hi)]
            fields.append((pos + 1, q))
            comma = text.find(",", q, hi)
        else:
            comma = text.find(",", pos, hi)
            fields.append((pos, comma if comma >= 0 else hi))
        if comma < 0:
            return fields
        pos = comma + 1


def _csv_column(name: str) -> Callable[[str, re.Match[str]], Sequence[tuple[int, int]]]:
    def column(text: str, m: re.Match[str]) -> Sequence[tuple[int, int]]:
        before = _previous_break(text, 0, m.start())
        line_start = before[1] if before else 0
        if not _CSV_LINE_PREFIX.fullmatch(text, line_start, m.start()):
            return []  # not a header: the names are in a sentence or a longer line
        brk = _next_break(text, m.start(), len(text))
        if brk is None:
            return []
        header = [text[s:e].strip().lower() for s, e in _csv_fields(text, m.start(), brk[0])]
        if name not in header:
            return []
        index, spans = header.index(name), []
        for _ in range(_CSV_ROWS):
            pos = brk[1]
            brk = _next_break(text, pos, len(text))
            stop = brk[0] if brk else min(len(text), pos + _KEY_LINE_MAX)
            prefix = _CSV_LINE_PREFIX.match(text, pos, stop)
            fields = _csv_fields(text, prefix.end() if prefix else pos, stop)
            if len(fields) != len(header):
                break  # the table ended
            start, end = fields[index]
            if end > start and _plausible_value(text[start:end]):
                spans.append((start, end))
            if brk is None:
                break
        return spans

    return column


# A password given to a program on its command line, also as a list of arguments (a compose
# healthcheck's ["CMD", "mysqladmin", "-uroot", "-pSECRET"]): the program, up to 24 arguments,
# the flag, the value.
_ARG_SEP = r"(?:[\"']?[ \t]*,[ \t]*[\"']?|[\"']?[ \t]+[\"']?)"
_FLAG_VALUE = r"(?:'(?P<q1>[^'\n]{1,256})'|\"(?P<q2>[^\"\n]{1,256})\"|(?P<v>[^\s'\"|;&,`]{1,256}))"


def _program_flag(programs: str, flags: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?:{programs})(?:{_ARG_SEP}[^\s|;&,\"'`]{{1,256}}){{0,24}}?{_ARG_SEP}(?:{flags})"
        + _FLAG_VALUE
    )


# mysql's -p takes its value attached (`-p` alone prompts, `-P` is the port).
_DB_CLIENT_PASSWORD = _program_flag(
    r"(?:mysql|mariadb)(?:-?(?:dump|admin|import|check|show|pump|sh))?", r"-p|--password="
)
_CLI_PASSWORDS = (
    (_program_flag(r"sshpass", r"-p[ \t]*"), ("sshpass",)),
    (
        _program_flag(
            r"(?:docker|podman|buildah|skopeo|helm registry|oras) login",
            r"-p[ \t]+|--password[ \t]*=[ \t]*",
        ),
        (" login",),
    ),
    (_program_flag(r"redis-cli", r"-a[ \t]+|--pass[ \t]+"), ("redis-cli",)),
    # A .netrc entry, on one line or over several.
    (
        re.compile(
            r"machine\s{1,8}\S{1,256}\s{1,8}login\s{1,8}\S{1,256}\s{1,8}password\s{1,8}"
            + _FLAG_VALUE
        ),
        ("machine",),
    ),
)
_DB_PASSWORD_VARIABLE = re.compile(
    r"(?:mysql_pwd|mysql_password|mysql_root_password|mariadb_password|mariadb_root_password|"
    r"pgpassword|postgres_password)"
)


def _db_password_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    value = text[start:end]
    if value != value.strip() or value.startswith("%"):
        return False  # `"-p" + password + " db"` in code, `-p%s` in a format string
    return _plausible_value(value)


_SECRET_NAME = (
    r"(?:secret|token|passw(?:or)?d|passphrase|api[_-]?key|apikey|access_?key|private_?key|"
    r"auth_?key|secret_?key|client_?secret|credentials?)"
)
# What may follow a secret's name: `=value` in double quotes, single quotes or none (.env, shell,
# code, URL queries, --flag=value), `"name": "value"` (JSON), `name: "value"` (a JS object, a
# quoted YAML value; without spaces, which prose quotes have), or `name: value` (a YAML line).
# Only what is inside the quotes is replaced. Possessive repeats (`{1,512}+`) give up at once
# instead of backtracking through a value with no closing quote.
_ASSIGNMENT_TAIL = (
    r"(?:[\"']?[ \t]*=(?!=)[ \t]*"
    r"(?:\"(?P<v1>[^\"\n]{1,512}+)\"|'(?P<v2>[^'\n]{1,512}+)'|(?P<v3>[^\s\"'`,;)}\]]{1,512}))"
    r"|[\"'][ \t]*:[ \t]*(?:\"(?P<j1>[^\"\n]{1,512}+)\"|'(?P<j2>[^'\n]{1,512}+)')"
    r"|[ \t]*:[ \t]*(?:\"(?P<c1>[^\"\s]{1,512}+)\"|'(?P<c2>[^'\s]{1,512}+)')"
    r"|[ \t]*:[ \t]*(?P<y>[^\s\"'#]{1,512}+)[ \t]*$)"
)


_AWS_SECRET_TAIL = (
    r"[\"']?(?:[ \t]*\[[^\]\n]{0,40}\])?(?:[ \t]*[=:][ \t]*|[ \t]+)[\"']?"
    r"(?P<v>[a-z0-9/+=]{40})(?![a-z0-9/+=])"
)


_ASSIGNMENT_GROUPS = ("v1", "v2", "v3", "j1", "j2", "c1", "c2", "y")


def _specific_rules() -> list[_Rule]:
    """Token shapes detect-secrets lacks or cuts short, then secrets known by their header."""
    c = re.compile
    return [
        # A whole PEM / OpenSSH / PGP block with its headers, on one line or several; escaped
        # newlines (a key inside a JSON string) count as newlines.
        _Rule(
            "private_key",
            c(
                r"-----BEGIN ([A-Z0-9 ]{0,40})PRIVATE KEY((?: BLOCK)?)-----"
                r"(?:(?!-----)[A-Za-z0-9+/=\s\\:,.\-]){16,16384}-----END \1PRIVATE KEY\2-----"
            ),
        ),
        # The same block as logs carry it: each line quoted (`> `), commented, numbered by a
        # file viewer or wrapped in string quotes, or cut short at either end by a tool that
        # keeps the head and tail of long text. Walked line by line from either marker.
        _Rule("private_key", _KEY_BEGIN, widen=_key_after_begin),
        _Rule("private_key", _KEY_END_MARK, widen=_key_before_end),
        _Rule(
            "anthropic_api_key",
            c(r"sk-ant-[A-Za-z0-9_\-]{20,300}"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "openai_api_key",
            c(r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,300}"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "github_token",
            c(r"github_pat_[A-Za-z0-9_]{22,255}"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "github_token",
            c(r"gh[pousr]_[A-Za-z0-9]{30,255}"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "huggingface_token",
            c(r"hf_[A-Za-z0-9]{30,64}(?![A-Za-z0-9])"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "npm_token",
            c(r"npm_[A-Za-z0-9]{36,64}(?![A-Za-z0-9])"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "google_api_key",
            c(r"AIza[0-9A-Za-z_\-]{35}"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "stripe_key",
            c(r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,255}"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "slack_token",
            c(r"x(?:ox[abposre]|app)-[A-Za-z0-9\-]{10,255}"),
            not_after=_TOKEN_CHARS,
        ),
        _Rule(
            "jwt",
            c(r"eyJ[A-Za-z0-9_\-]{8,4096}\.eyJ[A-Za-z0-9_\-]{8,8192}\.[A-Za-z0-9_\-]{0,2048}"),
            not_after=_TOKEN_CHARS,
            keep=_jwt_keep,
        ),
        # Named: `aws_secret_access_key = ...`, `"SecretAccessKey": "..."`, `aws configure`'s
        # prompt `AWS Secret Access Key [None]: ...`; bare, near its key id; in a console CSV.
        *(
            _Rule(
                "aws_secret_access_key",
                c(name + _AWS_SECRET_TAIL),
                group="v",
                folded=True,
            )
            for name in (r"aws[ _]?secret[ _]?(?:access[ _]?)?key", r"secret[ _]?access[ _]?key")
        ),
        _Rule(
            "aws_secret_access_key",
            _AWS_KEY_ID,
            widen=_aws_secret_near_id,
        ),
        _Rule(
            "aws_secret_access_key",
            _AWS_CSV_HEADER,
            hints=("access key id", "user name,password"),
            folded=True,
            widen=_csv_column("secret access key"),
        ),
        _Rule(
            "aws_console_password",
            _AWS_CSV_HEADER,
            hints=("user name,password",),
            folded=True,
            widen=_csv_column("password"),
        ),
        _Rule(
            "database_password",
            _DB_CLIENT_PASSWORD,
            group=("q1", "q2", "v"),
            hints=("mysql", "mariadb"),
            not_after=_TOKEN_CHARS,
            keep=_db_password_keep,
        ),
        *(
            _Rule(
                "cli_password",
                pattern,
                group=("q1", "q2", "v"),
                hints=hints,
                not_after=_TOKEN_CHARS,
                keep=_db_password_keep,
            )
            for pattern, hints in _CLI_PASSWORDS
        ),
        _Rule(
            "database_password",
            c(_DB_PASSWORD_VARIABLE.pattern + _ASSIGNMENT_TAIL, re.MULTILINE),
            group=_ASSIGNMENT_GROUPS,
            hints=("mysql", "mariadb", "pgpass", "postgres_pass"),
            folded=True,
            keep=_assignment_keep,
        ),
        _Rule(
            "bearer_token",
            c(r"bearer[ \t]+(?P<v>[a-z0-9\-._~+/]{16,4096}=*)"),
            group="v",
            folded=True,
            not_after=string.ascii_letters + string.digits,
            keep=_bearer_keep,
        ),
        _Rule(
            "bearer_token",
            c(r"authorization\"?[ \t]*[:=][ \t]*\"?token[ \t]+(?P<v>[a-z0-9\-._~+/]{16,4096}=*)"),
            group="v",
            folded=True,
            keep=_bearer_keep,
        ),
        # A header given to curl (`-H 'X-Api-Key: ...'`) whose name says it authenticates.
        _Rule(
            "auth_header",
            c(
                r"-h[ \t]+[\"']?[a-z0-9\-]{0,40}(?:key|token|secret|auth|password)[a-z0-9\-]{0,20}"
                r"[ \t]*:[ \t]*(?P<v>[^\s\"']{8,512})"
            ),
            group="v",
            folded=True,
            not_after="".join(chr(i) for i in range(33, 127)),  # only after a space or at start
            keep=_value_keep,
        ),
        _Rule(
            "basic_auth",
            c(r"authorization\"?[ \t]*[:=][ \t]*\"?basic[ \t]+(?P<v>[a-z0-9+/]{12,4096}={0,2})"),
            group="v",
            folded=True,
        ),
        # scheme://user:password@host; detect-secrets' BasicAuth pattern finds most of these too
        # and its findings merge with these.
        _Rule(
            "url_password",
            c(r"://[^\s:/?#@'\"<>]{1,256}:(?P<v>[^\s/?#@'\"<>]{1,256})@"),
            group="v",
            keep=_value_keep,
        ),
        _Rule(
            "url_password",
            c(r"-(?:u|-user)[ \t]+[^\s:'\"]{1,128}:(?P<v>[^\s'\"]{1,256})"),
            group="v",
            not_after="".join(chr(i) for i in range(33, 127)),  # only after a space or at start
            keep=_value_keep,
        ),
    ]


def _detect_secrets_rules() -> list[_Rule]:
    """detect-secrets' provider plugins: each regex with the type we report and the part of its
    match that is the secret. Its own ``findall`` yields capture groups, which for GitHub is only
    the ``ghp`` prefix, so spans are taken here. Its case-insensitive patterns are all lowercase
    and run on the lowercased text. Left out: Mailchimp and Telegram, whose patterns start with a
    character class (slow at every position, and no provider the product meets), Artifactory,
    IBM, Cloudant and SoftLayer, whose assignment patterns fire on prose."""
    aws_id, aws_secret = AWSKeyDetector.denylist
    slack_token, slack_webhook = SlackDetector.denylist
    table: list[tuple[str, re.Pattern[str], int]] = [
        ("aws_access_key_id", aws_id, 0),
        ("aws_secret_access_key", aws_secret, 1),
        ("azure_storage_key", AzureStorageKeyDetector.denylist[0], 0),
        ("url_password", BasicAuthDetector.denylist[0], 1),
        ("discord_bot_token", DiscordBotTokenDetector.denylist[0], 0),
        ("github_token", GitHubTokenDetector.denylist[0], 0),
        ("openai_api_key", OpenAIDetector.denylist[0], 0),
        ("pypi_token", PypiTokenDetector.denylist[0], 0),
        ("pypi_token", PypiTokenDetector.denylist[1], 0),
        ("sendgrid_api_key", SendGridDetector.denylist[0], 0),
        ("slack_token", slack_token, 0),
        ("slack_webhook", slack_webhook, 0),
        ("square_oauth_secret", SquareOAuthDetector.denylist[0], 0),
        ("stripe_key", StripeDetector.denylist[0], 0),
        ("twilio_api_key", TwilioKeyDetector.denylist[0], 0),
        ("twilio_api_key", TwilioKeyDetector.denylist[1], 0),
    ]
    table += [("gitlab_token", p, 0) for p in GitLabTokenDetector.denylist]
    rules = []
    for kind, pattern, group in table:
        # A case-insensitive pattern matches the lowercased text once its own letters are
        # lowercased, which lets the engine search for its literal prefix; an escape such as \S
        # would change meaning, so such a pattern stays as it is.
        folded = bool(pattern.flags & re.IGNORECASE) and not re.search(r"\\[A-Z]", pattern.pattern)
        if folded:
            pattern = re.compile(pattern.pattern.lower(), pattern.flags & ~re.IGNORECASE)
        rules.append(_Rule(kind, pattern, group, folded=folded))
    return rules


def _generic_rules() -> list[_Rule]:
    """Secrets known by their context rather than their shape."""
    c = re.compile
    return [
        _Rule(
            "secret_assignment",
            c(_SECRET_NAME + _ASSIGNMENT_TAIL, re.MULTILINE),
            group=_ASSIGNMENT_GROUPS,
            hints=("=", ":"),
            folded=True,
            keep=_assignment_keep,
        ),
        _Rule(
            "secret_assignment",
            c(
                r"--[a-z\-]{0,32}(?:password|passwd|token|secret|api-key|apikey)[ \t]+"
                r"(?P<v>[^\s\-]\S{0,511})"
            ),
            group="v",
            folded=True,
            keep=_value_keep,
        ),
        # Found at its @ and extended left over the local part: a pattern starting at the local
        # part would be tried at every letter of the text.
        _Rule(
            "email",
            c(r"@(?:[a-z0-9\-]{1,63}\.){1,8}[a-z]{2,24}(?![a-z0-9\-])"),
            hints=("@",),
            folded=True,
            extend_left=_LOCAL_PART,
            keep=_email_keep,
        ),
    ]


# Order is priority: when findings overlap, the merged replacement takes the earliest rule's type.
_RULES: tuple[_Rule, ...] = tuple(_specific_rules() + _detect_secrets_rules() + _generic_rules())


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    rank: int
    kind: str


def _fold(text: str) -> str:
    """ASCII letters lowercased, every index unchanged (``str.lower`` can change the length of
    a few non-ASCII strings, such as a dotted capital I)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _find(text: str) -> list[_Span]:
    if not text:
        return []
    folded = _fold(text)
    present: dict[str, bool] = {}

    def occurs(hint: str) -> bool:
        if hint not in present:
            present[hint] = hint in folded
        return present[hint]

    existing = [m.span() for m in _TOKEN_RE.finditer(folded)] if "[redacted:" in folded else []
    found: list[_Span] = []
    for rank, rule in enumerate(_RULES):
        if rule.hints and not any(occurs(h) for h in rule.hints):
            continue
        for m in rule.pattern.finditer(folded if rule.folded else text):
            if rule.not_after and m.start() > 0 and text[m.start() - 1] in rule.not_after:
                continue
            spans = rule.widen(text, m) if rule.widen is not None else (_span(m, rule.group),)
            for start, end in spans:
                if start < 0 or start == end:
                    continue
                if rule.extend_left:
                    stop = max(0, start - 64)
                    while start > stop and text[start - 1] in rule.extend_left:
                        start -= 1
                    if start == m.start():
                        continue
                if rule.keep is not None and not rule.keep(text, m, start, end):
                    continue
                if any(s < end and start < e for s, e in existing):
                    continue  # already a replacement token: redaction is idempotent
                found.append(_Span(start, end, rank, rule.kind))
    return _merge(found)


def _span(m: re.Match[str], group: int | str | tuple[str, ...]) -> tuple[int, int]:
    if not isinstance(group, tuple):
        return m.span(group)
    for name in group:
        if m.start(name) >= 0:
            return m.span(name)
    return (-1, -1)


def _merge(spans: list[_Span]) -> list[_Span]:
    """Union overlapping findings; the merged span is typed by its highest-priority part."""
    merged: list[_Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end, s.rank)):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            best = last if last.rank <= span.rank else span
            merged[-1] = _Span(last.start, max(last.end, span.end), best.rank, best.kind)
        else:
            merged.append(span)
    return merged


_BREAKS = re.compile(r"\r\n|\r|\n")


def redact(text: str) -> Redacted[str]:
    """Replace every secret in ``text`` with ``[REDACTED:<type>]`` and count them by type."""
    spans = _find(text)
    if not spans:
        return Redacted(text, {})
    out: list[str] = []
    pos = 0
    for span in spans:
        out.append(text[pos : span.start])
        out.append(TOKEN.format(span.kind))
        # A secret over several lines (a key block) leaves its line breaks after the token, so
        # every later line keeps its number in a numbered file view.
        out.extend(_BREAKS.findall(text, span.start, span.end))
        pos = span.end
    out.append(text[pos:])
    return Redacted("".join(out), _sorted_counts(Counter(s.kind for s in spans)))


def still_has_secrets(text: str) -> tuple[str, ...]:
    """The types of secret still present in ``text`` (empty when clean). Run over what is about
    to be written, after redaction: escaping, joining and fields that never went through
    ``redact`` can each let one through."""
    return tuple(sorted({span.kind for span in _find(text)}))


_SECRET_KEY = re.compile(rf"[A-Za-z0-9_.\-]{{0,64}}?{_SECRET_NAME}", re.IGNORECASE)


def redact_data[T](data: T) -> Redacted[T]:
    """Redact every string inside JSON-like data (dicts, lists, tuples); keys are kept. A string
    under a key that names a secret (``"password"``, ``"GITHUB_TOKEN"``) is replaced whole."""
    counts: Counter[str] = Counter()
    strings: list[str] = []

    def whole(value: str, key: str | None) -> bool:
        return (
            key is not None and _SECRET_KEY.fullmatch(key) is not None and _plausible_value(value)
        )

    def collect(value: Any, key: str | None) -> None:
        if isinstance(value, str):
            if whole(value, key):
                counts["secret_assignment"] += 1
            else:
                strings.append(value)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                collect(v, k if isinstance(k, str) else None)
        elif isinstance(value, (list, tuple)):
            for v in value:
                collect(v, None)

    collect(data, None)
    redacted = iter(_redact_many(strings, counts))

    def rebuild(value: Any, key: str | None) -> Any:
        if isinstance(value, str):
            return TOKEN.format("secret_assignment") if whole(value, key) else next(redacted)
        if isinstance(value, Mapping):
            return {k: rebuild(v, k if isinstance(k, str) else None) for k, v in value.items()}
        if isinstance(value, list):
            return [rebuild(v, None) for v in value]
        if isinstance(value, tuple):
            return tuple(rebuild(v, None) for v in value)
        return value

    return Redacted(rebuild(data, None), _sorted_counts(counts))


# No pattern crosses a NUL between newlines (no character class or repeat admits NUL, and none
# spans lines but the private-key body, which stops at NUL), so the strings of one structure can
# go through the rules in one pass instead of paying the per-call cost for every short string.
_SEPARATOR = "\n\x00\n"


def _redact_many(strings: list[str], counts: Counter[str]) -> list[str]:
    if not any("\x00" in s for s in strings):
        joined = redact(_SEPARATOR.join(strings))
        parts = joined.value.split(_SEPARATOR)
        if len(parts) == len(strings):
            counts.update(joined.counts)
            return parts
    out = []
    for s in strings:
        r = redact(s)
        counts.update(r.counts)
        out.append(r.value)
    return out


def replaced_counts(text: str) -> dict[str, int]:
    """The replacement tokens in ``text``, by type: what a text redacted in several steps (cut
    after an early redaction, then redacted again whole) holds in all."""
    return _sorted_counts(Counter(m.group(1) for m in _TOKEN_COUNT_RE.finditer(text)))


_TOKEN_COUNT_RE = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


def merge_counts(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Sum several redaction counts into one, sorted by type (a manifest's redaction report)."""
    total: Counter[str] = Counter()
    for c in counts:
        total.update(c)
    return _sorted_counts(total)


def _sorted_counts(counts: Counter[str]) -> dict[str, int]:
    return {k: counts[k] for k in sorted(counts) if counts[k]}
