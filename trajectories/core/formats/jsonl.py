"""A tolerant JSON Lines reader.

Real logs are not clean. A writer drops a newline and two JSON objects share a
line (two of the pi sessions in the corpus do); ``json.loads`` rejects such a
line as "Extra data", while decoding value after value with ``raw_decode``
recovers both. A crash prints its stack trace between the events of a
stream-json log, a session still being written ends mid-line, a byte is
garbled: each such line is reported with its number and skipped, and every
other line is kept.

Lines are split on ``\\n`` only: JSON strings may legally hold U+2028 and
other characters that ``str.splitlines`` would treat as line breaks.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .model import LineWarning

_SPACE = " \t\r\n"
# A \uD800-\uDFFF escape: JSON allows it alone, but a lone surrogate is not text
# and no database driver or UTF-8 encoder will take it.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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


def read_records(text: str) -> tuple[list[Record], list[int], list[LineWarning]]:
    """Decode every line, skipping the ones that do not decode.

    Returns the records read, the lines that held more than one value, and a
    warning for each line skipped (a line cut off at the end of the file says so).
    """
    records: list[Record] = []
    crowded: list[int] = []
    bad: list[LineWarning] = []
    last = 0
    for number, line in iter_lines(text):
        last = number
        try:
            values = values_on_line(line)
        except (ValueError, RecursionError) as error:
            reason = f"line {number} is not valid JSON: {describe_error(error)}"
            bad.append(LineWarning(number, reason))
            continue
        if len(values) > 1:
            crowded.append(number)
        records.extend(Record(number, value) for value in values)
    # A log being written, or copied while it was, stops without its last newline.
    if bad and bad[-1].line == last and not text.endswith("\n"):
        bad[-1] = LineWarning(last, bad[-1].reason + " (the file ends mid-line, as if cut off)")
    return records, crowded, bad


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


def may_hold_surrogates(text: str) -> bool:
    return _SURROGATE_ESCAPE.search(text) is not None


def replace_surrogates(value: Any) -> tuple[Any, bool]:
    """``value`` with every lone surrogate replaced by U+FFFD, and whether there was one.

    The JSON decoder joins escaped surrogate pairs into one character, so any
    surrogate left in a decoded string stands alone.
    """
    if isinstance(value, str):
        fixed = _LONE_SURROGATE.sub("\ufffd", value)
        return fixed, fixed != value
    if isinstance(value, list):
        changed = False
        for index, item in enumerate(value):
            value[index], hit = replace_surrogates(item)
            changed = changed or hit
        return value, changed
    if isinstance(value, dict):
        changed = False
        for key in list(value):
            item, hit = replace_surrogates(value[key])
            fixed_key, key_hit = replace_surrogates(key)
            if key_hit:
                del value[key]
            value[fixed_key] = item
            changed = changed or hit or key_hit
        return value, changed
    return value, False


class StrictJSONError(ValueError):
    """A document that is not standard JSON a JSON column could store again; says why."""


def loads_strict(
    text: str | bytes, *, max_depth: int = 100, parse_float: Callable[[str], Any] | None = None
) -> Any:
    """One JSON document that people or clients sent (a behaviour spec, an API body).

    ``json.loads`` takes NaN and Infinity (which no JSON column stores), lone surrogates (which
    no UTF-8 encoder or database driver takes), and raises ``RecursionError``, not
    ``ValueError``, on deep nesting: each of those became a 500. Here each is a
    ``StrictJSONError`` saying why, and nesting past ``max_depth`` is refused too, so that
    what validates the document next (jsonschema recurses) cannot run out of stack either. A
    NUL character (``\\u0000``) is refused as well: PostgreSQL stores it in neither a text nor
    a JSON column.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise StrictJSONError(f"not UTF-8 text (byte {error.start})") from None
    decoder = json.JSONDecoder(
        parse_constant=_reject_constant, parse_float=parse_float or _finite_float
    )
    try:
        value = decoder.decode(text)
    except RecursionError:
        raise StrictJSONError(f"nested deeper than {max_depth} levels") from None
    except NonStandardJSON as error:
        raise StrictJSONError(str(error)) from None
    except json.JSONDecodeError as error:
        raise StrictJSONError(f"not JSON: {describe_error(error)}") from None
    _check_nesting(value, max_depth)
    if may_hold_surrogates(text) and replace_surrogates(value)[1]:
        raise StrictJSONError("a string holds a lone surrogate escape (\\ud800-\\udfff)")
    if "\\u0000" in text and _holds_nul(value):
        raise StrictJSONError(
            "a string holds a NUL character (\\u0000), which PostgreSQL cannot store"
        )
    return value


def _holds_nul(value: Any) -> bool:
    # Only through the \u0000 escape: the decoder refuses a raw control character in a string.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _check_nesting(value: Any, max_depth: int) -> None:
    # A loop over a stack, not recursion: the point is to refuse depth, not to hit it.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > max_depth:
                raise StrictJSONError(f"nested deeper than {max_depth} levels")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
