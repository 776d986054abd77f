"""Redacting JSON-like data (an ATIF trajectory, an export's records): every string inside, and
whole values under keys that name a secret."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from .assignments import SECRET_KEY
from .engine import redact
from .report import TOKEN, Redacted, sorted_counts
from .rule import plausible_value


def redact_data[T](data: T) -> Redacted[T]:
    """Redact every string inside JSON-like data (dicts, lists, tuples); keys are kept. A string
    under a key that names a secret (``"password"``, ``"GITHUB_TOKEN"``) is replaced whole."""
    counts: Counter[str] = Counter()
    strings: list[str] = []

    def whole(value: str, key: str | None) -> bool:
        return key is not None and SECRET_KEY.fullmatch(key) is not None and plausible_value(value)

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

    return Redacted(rebuild(data, None), sorted_counts(counts))


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
