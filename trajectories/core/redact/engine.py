"""Finding secrets in a text: every rule's findings, merged where they overlap, then replaced."""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass

from . import assignments, context, keys, tokens
from .report import TOKEN, Redacted, sorted_counts
from .rule import Rule

_TOKEN_RE = re.compile(r"\[redacted:[a-z0-9_]+\]")  # matched on the lowercased text

# Order is priority: when findings overlap, the merged replacement takes the earliest rule's type.
RULES: tuple[Rule, ...] = (
    *keys.rules(),
    *tokens.shape_rules(),
    *context.rules(),
    *tokens.header_rules(),
    *tokens.detect_secrets_rules(),
    *assignments.rules(),
    *tokens.email_rules(),
)


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
    for rank, rule in enumerate(RULES):
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
    return Redacted("".join(out), sorted_counts(Counter(s.kind for s in spans)))


def still_has_secrets(text: str) -> tuple[str, ...]:
    """The types of secret still present in ``text`` (empty when clean). Run over what is about
    to be written, after redaction: escaping, joining and fields that never went through
    ``redact`` can each let one through."""
    return tuple(sorted({span.kind for span in _find(text)}))
