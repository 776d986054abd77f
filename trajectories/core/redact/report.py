"""What the redactor hands back: the replacement token, the redacted value with its counts by
type, and the sums of counts a manifest reports."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

TOKEN = "[REDACTED:{}]"


@dataclass(frozen=True)
class Redacted[T]:
    """What came out of the redactor, and how many replacements of each type it made."""

    value: T
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def replaced_counts(text: str) -> dict[str, int]:
    """The replacement tokens in ``text``, by type: what a text redacted in several steps (cut
    after an early redaction, then redacted again whole) holds in all."""
    return sorted_counts(Counter(m.group(1) for m in _TOKEN_COUNT_RE.finditer(text)))


_TOKEN_COUNT_RE = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


def merge_counts(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Sum several redaction counts into one, sorted by type (a manifest's redaction report)."""
    total: Counter[str] = Counter()
    for c in counts:
        total.update(c)
    return sorted_counts(total)


def sorted_counts(counts: Counter[str]) -> dict[str, int]:
    return {k: counts[k] for k in sorted(counts) if counts[k]}
