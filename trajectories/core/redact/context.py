"""Secrets known by what stands near them: an AWS secret key beside its key id or under its name,
the columns of the AWS console's credential CSVs, and passwords given to database clients and
other programs on their command line or in their variables."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .assignments import ASSIGNMENT_GROUPS, ASSIGNMENT_TAIL, assignment_keep
from .keys import LINE_MAX, next_break, previous_break
from .rule import TOKEN_CHARS, Rule, plausible_value

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
        before = previous_break(text, 0, m.start())
        line_start = before[1] if before else 0
        if not _CSV_LINE_PREFIX.fullmatch(text, line_start, m.start()):
            return []  # not a header: the names are in a sentence or a longer line
        brk = next_break(text, m.start(), len(text))
        if brk is None:
            return []
        header = [text[s:e].strip().lower() for s, e in _csv_fields(text, m.start(), brk[0])]
        if name not in header:
            return []
        index, spans = header.index(name), []
        for _ in range(_CSV_ROWS):
            pos = brk[1]
            brk = next_break(text, pos, len(text))
            stop = brk[0] if brk else min(len(text), pos + LINE_MAX)
            prefix = _CSV_LINE_PREFIX.match(text, pos, stop)
            fields = _csv_fields(text, prefix.end() if prefix else pos, stop)
            if len(fields) != len(header):
                break  # the table ended
            start, end = fields[index]
            if end > start and plausible_value(text[start:end]):
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
    return plausible_value(value)


_AWS_SECRET_TAIL = (
    r"[\"']?(?:[ \t]*\[[^\]\n]{0,40}\])?(?:[ \t]*[=:][ \t]*|[ \t]+)[\"']?"
    r"(?P<v>[a-z0-9/+=]{40})(?![a-z0-9/+=])"
)


def rules() -> list[Rule]:
    """AWS secrets by their names, their key id and their CSV header; programs' passwords."""
    c = re.compile
    return [
        # Named: `aws_secret_access_key = ...`, `"SecretAccessKey": "..."`, `aws configure`'s
        # prompt `AWS Secret Access Key [None]: ...`; bare, near its key id; in a console CSV.
        *(
            Rule(
                "aws_secret_access_key",
                c(name + _AWS_SECRET_TAIL),
                group="v",
                folded=True,
            )
            for name in (r"aws[ _]?secret[ _]?(?:access[ _]?)?key", r"secret[ _]?access[ _]?key")
        ),
        Rule(
            "aws_secret_access_key",
            _AWS_KEY_ID,
            widen=_aws_secret_near_id,
        ),
        Rule(
            "aws_secret_access_key",
            _AWS_CSV_HEADER,
            hints=("access key id", "user name,password"),
            folded=True,
            widen=_csv_column("secret access key"),
        ),
        Rule(
            "aws_console_password",
            _AWS_CSV_HEADER,
            hints=("user name,password",),
            folded=True,
            widen=_csv_column("password"),
        ),
        Rule(
            "database_password",
            _DB_CLIENT_PASSWORD,
            group=("q1", "q2", "v"),
            hints=("mysql", "mariadb"),
            not_after=TOKEN_CHARS,
            keep=_db_password_keep,
        ),
        *(
            Rule(
                "cli_password",
                pattern,
                group=("q1", "q2", "v"),
                hints=hints,
                not_after=TOKEN_CHARS,
                keep=_db_password_keep,
            )
            for pattern, hints in _CLI_PASSWORDS
        ),
        Rule(
            "database_password",
            c(_DB_PASSWORD_VARIABLE.pattern + ASSIGNMENT_TAIL, re.MULTILINE),
            group=ASSIGNMENT_GROUPS,
            hints=("mysql", "mariadb", "pgpass", "postgres_pass"),
            folded=True,
            keep=assignment_keep,
        ),
    ]
