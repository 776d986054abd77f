"""traj2env judging rules for a qa task's answer file: the bytes in, a reward out.

Standard library only (Python 3.8+): the same file is imported by ``answer_grade.py`` inside the
task's verifier, by the trial matrix on the host (``trials.answers``, on the very bytes that
crossed) and by the qa miner (which writes the expected answer in canonical form), so every
place decides by the same rules.

An expected answer is ``{"type": "exact" | "numeric" | "set", "value": ..., "tolerance": t}``.
The answer file scores 1 only when it holds **one** answer that matches:

* ``numeric``: the whole file is one number (``42``, ``-3.5``, ``1,234``, ``1e3``), within
  ``tolerance`` of the expected value;
* ``exact``: the whole file equals the expected text, ignoring case, surrounding quotes and
  space, a final full stop and runs of white space;
* ``set``: its items (one per line, or separated by commas or semicolons), normalised as for
  ``exact`` (numbers as numbers), are exactly the expected items, in any order.

So a file that lists every plausible answer (many numbers, every value in the data, a superset
of the set) scores 0, as does a non-answer ("I don't know"), an empty file, text that is not
UTF-8 and a file longer than any answer.
"""

from __future__ import annotations

import math
import re
import unicodedata

MAX_ANSWER_BYTES = 64 << 10
TYPES = ("exact", "numeric", "set")
_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_ITEM_SPLIT = re.compile(r"\s*[\n,;]\s*")
_QUOTES = "\"'`\u201c\u201d\u2018\u2019"


class Judged:
    """A reward with its reasons (empty when 1) and the answer as read (for the record)."""

    def __init__(self, reward, reasons, answer=""):
        self.reward = reward
        self.reasons = tuple(reasons)
        self.answer = answer

    def to_dict(self):
        return {"reward": self.reward, "reasons": list(self.reasons), "answer": self.answer}


def number(text):
    """The float ``text`` spells as one number (thousands commas allowed), or None."""
    text = text.strip()
    if not text or not any(c.isdigit() for c in text) or not _NUMBER.match(text):
        return None
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def normal(text):
    """``text`` as the exact and set rules compare it."""
    text = unicodedata.normalize("NFKC", text).strip().strip(_QUOTES).strip()
    if text.endswith(".") and not text[:-1].rstrip().endswith("."):
        text = text[:-1]
    return " ".join(text.split()).casefold()


def item(text):
    """One set item: a number by its value, anything else by its normal form."""
    value = number(text)
    return repr(value) if value is not None else normal(text)


def items(text):
    return {item(part) for part in _ITEM_SPLIT.split(text.strip()) if part.strip()}


def canonical(expected):
    """The expected answer as the oracle writes it into the answer file."""
    kind, value = expected["type"], expected["value"]
    if kind == "set":
        return "\n".join(sorted(str(v).strip() for v in value)) + "\n"
    return str(value).strip() + "\n"


def decode(data):
    """The answer's text, or (None, why not)."""
    if len(data) > MAX_ANSWER_BYTES:
        return None, f"the answer file holds {len(data)} bytes, more than any answer"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "the answer file is not UTF-8 text"
    return text.lstrip("\ufeff"), ""


def judge(data, expected):
    """The reward of answer-file bytes ``data`` (None: no such file) against ``expected``."""
    if data is None:
        return Judged(0.0, ["no answer file"])
    text, why = decode(data)
    if text is None:
        return Judged(0.0, [why])
    shown = text.strip()[:200]
    if not text.strip():
        return Judged(0.0, ["the answer file is empty"], shown)
    kind = expected.get("type")
    if kind == "numeric":
        value = number(text)
        want = float(expected["value"])
        tolerance = abs(float(expected.get("tolerance") or 0.0))
        if value is None:
            return Judged(0.0, ["the answer is not a single number"], shown)
        # A hair of slack for the float spelling of the same decimal (0.1 + 0.2 vs 0.3).
        slack = tolerance + 1e-9 * max(1.0, abs(want))
        if abs(value - want) > slack:
            return Judged(0.0, [f"{value!r} is not within {tolerance:g} of the answer"], shown)
        return Judged(1.0, [], shown)
    if kind == "exact":
        if normal(text) != normal(str(expected["value"])):
            return Judged(0.0, ["the answer is not the expected one"], shown)
        return Judged(1.0, [], shown)
    if kind == "set":
        got = items(text)
        want_items = {item(str(v)) for v in expected["value"]}
        if got != want_items:
            extra, missing = len(got - want_items), len(want_items - got)
            why = f"the items differ from the answer's ({extra} extra, {missing} missing)"
            return Judged(0.0, [why], shown)
        return Judged(1.0, [], shown)
    return Judged(0.0, [f"unknown answer type {kind!r}"], shown)
