"""A tolerant JSON Lines reader.

Real logs sometimes hold two JSON objects on one line where a writer dropped a
newline (two of the pi sessions in the corpus do). ``json.loads`` rejects such a
line as "Extra data"; decoding value after value with ``raw_decode`` recovers
both. Anything else that fails to decode is a genuinely bad line.

Lines are split on ``\\n`` only: JSON strings may legally hold U+2028 and
other characters that ``str.splitlines`` would treat as line breaks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_SPACE = " \t\r\n"


class NonStandardJSON(ValueError):
    """NaN or Infinity: accepted by Python, but not JSON and not storable as JSON."""


def _reject_constant(name: str) -> Any:
    raise NonStandardJSON(f"non-standard JSON constant {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    # 1e999 is valid JSON but becomes infinity, which JSON cannot store again.
    if value in (math.inf, -math.inf):
        raise NonStandardJSON(f"number {text} is too large")
    return value


DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


@dataclass(frozen=True, slots=True)
class Record:
    line: int  # 1-based line of the file the value starts on
    value: Any


@dataclass(frozen=True, slots=True)
class BadLine:
    line: int
    reason: str


def values_on_line(text: str) -> list[Any]:
    """Every JSON value on one line, in order.

    Raises ``ValueError`` (``json.JSONDecodeError`` or ``NonStandardJSON``) or
    ``RecursionError`` when the line is not a sequence of complete values.
    """
    found: list[Any] = []
    end = len(text)
    pos = 0
    while True:
        while pos < end and text[pos] in _SPACE:
            pos += 1
        if pos >= end:
            return found
        value, pos = DECODER.raw_decode(text, pos)
        found.append(value)


def describe_error(error: BaseException) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} (column {error.colno})"
    if isinstance(error, RecursionError):
        return "JSON nested too deeply to read"
    return str(error)


def iter_lines(text: str, first_line: int = 1) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers."""
    for number, line in enumerate(text.split("\n"), start=first_line):
        if line.strip():
            yield number, line


def read_records(text: str) -> tuple[list[Record], list[int], BadLine | None]:
    """Decode every line; stop at the first bad one.

    Returns the records read, the lines that held more than one value, and the
    first bad line (None when every line decoded).
    """
    records: list[Record] = []
    crowded: list[int] = []
    for number, line in iter_lines(text):
        try:
            values = values_on_line(line)
        except (ValueError, RecursionError) as error:
            return records, crowded, BadLine(number, describe_error(error))
        if len(values) > 1:
            crowded.append(number)
        records.extend(Record(number, value) for value in values)
    return records, crowded, None


def sniff_records(text: str, limit: int) -> list[Record]:
    """Up to ``limit`` records from the start of a text, skipping lines that do not decode.

    For detection, which must recognise a log even when a line is truncated.
    """
    records: list[Record] = []
    for number, line in iter_lines(text):
        try:
            values = values_on_line(line)
        except (ValueError, RecursionError):
            continue
        records.extend(Record(number, value) for value in values)
        if len(records) >= limit:
            break
    return records
