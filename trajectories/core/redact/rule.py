"""What a rule is, and the checks of a found value that rules of several families share."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from detect_secrets.filters.heuristic import (
    is_not_alphanumeric_string,
    is_prefixed_with_dollar_sign,
    is_templated_secret,
)

# (text, match, start, end) of a finding -> keep it? The match is on the text the rule ran on.
Validator = Callable[[str, re.Match[str], int, int], bool]


@dataclass(frozen=True)
class Rule:
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


TOKEN_CHARS = string.ascii_letters + string.digits + "_-"

_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false undefined required optional str string int secret password "
    "token redacted hidden masked example changeme_later your_token your_password".split()
)
_CODE_VALUE = re.compile(
    r"[()\[\]{}<>$`]|^(?:os\.environ|os\.getenv|process\.env|env\.|self\.|settings\.)"
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"
)


def plausible_value(value: str) -> bool:
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


def value_keep(text: str, m: re.Match[str], start: int, end: int) -> bool:
    return plausible_value(text[start:end])
