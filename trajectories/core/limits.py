"""How much text a person may type into a field, and how much of it a message echoes back.

Every service that stores what someone typed checks it here first and refuses, in words, a
value over its field's limit: nothing is cut silently. A refusal (or any error) that quotes
what was typed quotes ``echo(value)``, a short form, so a 200 KB paste neither comes back
whole nor overflows the box it is shown in. A NUL character is refused the same way
(``refusal``): PostgreSQL stores it in no text column, so it would otherwise be a 500 there.

>>> too_long("title", "x" * 204_800, TITLE)
'title is 204,800 characters long; at most 200 are allowed'
>>> too_long("title", "Run the focused test first", TITLE) is None
True
>>> refusal("the note", "ready" + chr(0), TITLE)
'the note holds a NUL character (code 0), which cannot be stored'
>>> storable("killed" + chr(0) + " by hand")
'killed by hand'
>>> echo("a" * 100)
"'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…' (100 characters)"
>>> echo("short")
"'short'"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# The limits, in characters, by the kind of field (the database columns agree where they are
# CharFields; TextFields have none of their own).
NAME = 120  # a slug, an adapter's or a client's name
TITLE = 200  # a title, a note, a model or plan name
LINE = 1_000  # a one-line value: a URI, an agent's name
PATH = 4_096  # a folder on the server (PATH_MAX)
COMMENT = 10_000  # a review comment, a rationale, a reason
SPEC = 1_000_000  # a whole behaviour spec as JSON text

# What no PostgreSQL text or JSON column stores.
NUL = "\x00"

# How many characters of a value a message quotes.
ECHO = 60


def too_long(label: str, value: str, limit: int) -> str | None:
    """Why ``value`` is refused for the field ``label``, or None when it fits."""
    if len(value) <= limit:
        return None
    return f"{label} is {len(value):,} characters long; at most {limit:,} are allowed"


def refusal(label: str, value: str, limit: int) -> str | None:
    """Why typed ``value`` cannot be stored in the field ``label``: a NUL character, or over
    its limit; None when it can."""
    if NUL in value:
        return f"{label} holds a NUL character (code 0), which cannot be stored"
    return too_long(label, value, limit)


def storable(value: str) -> str:
    """``value`` without its NUL characters, for the one text that is never refused (a kill's
    reason: the kill switch works whatever its request says)."""
    return value.replace(NUL, "")


def first_too_long(values: Iterable[tuple[str, str, int]]) -> str | None:
    """The first refusal among (label, value, limit) triples, or None when all fit."""
    for label, value, limit in values:
        problem = too_long(label, value, limit)
        if problem:
            return problem
    return None


def fields_too_long(values: Mapping[str, str], limits: Mapping[str, int]) -> dict[str, str]:
    """Every field of ``values`` over its limit, with why (labels are the field names with
    spaces for underscores), so a form shows all of them at once."""
    found = {}
    for name, limit in limits.items():
        problem = too_long(name.replace("_", " "), values.get(name, ""), limit)
        if problem:
            found[name] = problem
    return found


def echo(value: object, limit: int = ECHO) -> str:
    """``value`` quoted as a message shows it: its repr, or its first ``limit`` characters and
    an ellipsis with the whole length when it is longer."""
    if not isinstance(value, str):
        shown = repr(value)
        return shown if len(shown) <= limit else f"{shown[:limit]}… ({len(shown):,} characters)"
    if len(value) <= limit:
        return repr(value)
    quoted = repr(value[:limit])
    return f"{quoted[:-1]}…{quoted[-1]} ({len(value):,} characters)"
