"""Secrets known by the name they are assigned to: ``.env`` lines, shell exports, JSON and YAML
keys, object literals and ``--password``-style flags."""

from __future__ import annotations

import re

from .rule import Rule, plausible_value, value_keep

SECRET_NAME = (
    r"(?:secret|token|passw(?:or)?d|passphrase|api[_-]?key|apikey|access_?key|private_?key|"
    r"auth_?key|secret_?key|client_?secret|credentials?)"
)
# What may follow a secret's name: `=value` in double quotes, single quotes or none (.env, shell,
# code, URL queries, --flag=value), `"name": "value"` (JSON), `name: "value"` (a JS object, a
# quoted YAML value; without spaces, which prose quotes have), or `name: value` (a YAML line).
# Only what is inside the quotes is replaced. Possessive repeats (`{1,512}+`) give up at once
# instead of backtracking through a value with no closing quote.
ASSIGNMENT_TAIL = (
    r"(?:[\"']?[ \t]*=(?!=)[ \t]*"
    r"(?:\"(?P<v1>[^\"\n]{1,512}+)\"|'(?P<v2>[^'\n]{1,512}+)'|(?P<v3>[^\s\"'`,;)}\]]{1,512}))"
    r"|[\"'][ \t]*:[ \t]*(?:\"(?P<j1>[^\"\n]{1,512}+)\"|'(?P<j2>[^'\n]{1,512}+)')"
    r"|[ \t]*:[ \t]*(?:\"(?P<c1>[^\"\s]{1,512}+)\"|'(?P<c2>[^'\s]{1,512}+)')"
    r"|[ \t]*:[ \t]*(?P<y>[^\s\"'#]{1,512}+)[ \t]*$)"
)


ASSIGNMENT_GROUPS = ("v1", "v2", "v3", "j1", "j2", "c1", "c2", "y")

_YAML_KEY_LINE = re.compile(r"[ \t]*(?:-[ \t]+)?[A-Za-z0-9_.\-]*$")


# An unquoted value that is a keyword, or is followed by a call, is code: `const apiKey = await
# getKey(model)`, `token = new Token()`, `secret = yield load()`.
_CODE_WORDS = frozenset(
    "await new yield typeof void delete async function lambda not return".split()
)
_CALL_AFTER = re.compile(r"[ \t]*[A-Za-z_$][\w$.]*[ \t]*\(")


def assignment_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
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
    return plausible_value(text[start:end])


# A key whose whole value is a secret in JSON-like data (``"password"``, ``"GITHUB_TOKEN"``).
SECRET_KEY = re.compile(rf"[A-Za-z0-9_.\-]{{0,64}}?{SECRET_NAME}", re.IGNORECASE)


def rules() -> list[Rule]:
    """A secret's name with its value, and a command-line flag naming a secret with its value."""
    c = re.compile
    return [
        Rule(
            "secret_assignment",
            c(SECRET_NAME + ASSIGNMENT_TAIL, re.MULTILINE),
            group=ASSIGNMENT_GROUPS,
            hints=("=", ":"),
            folded=True,
            keep=assignment_keep,
        ),
        Rule(
            "secret_assignment",
            c(
                r"--[a-z\-]{0,32}(?:password|passwd|token|secret|api-key|apikey)[ \t]+"
                r"(?P<v>[^\s\-]\S{0,511})"
            ),
            group="v",
            folded=True,
            keep=value_keep,
        ),
    ]
