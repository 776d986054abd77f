"""Reading a file into JSON values, and naming what a file is when it is not a trajectory.

One pass: the file is decoded as UTF-8 and parsed either as one JSON document
(pretty-printed or not) or as JSON Lines. A JSON Lines log keeps every line
that decodes; a line that does not (a stack trace printed between events, a
last line cut off, a value that is not an object) is skipped with a warning
naming its line, and so is a line whose bytes had to be repaired (not UTF-8, a
lone surrogate escape). A document has no lines to skip: if it does not parse,
the file is an ``IngestError``. Files that are plainly something else (text,
Markdown, binary) are recognised from their first bytes without reading the rest.

Only regular files are opened: a FIFO would block the reader forever and a
device may never end, so both are refused before a byte is read.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .detect import SNIFF_RECORDS, classify
from .jsonl import (
    DECODER,
    Record,
    describe_error,
    iter_lines,
    may_hold_surrogates,
    read_records,
    replace_surrogates,
    sniff_records,
    values_on_line,
)
from .model import IngestError, LineWarning, NotTrajectory

HEAD_BYTES = 64 * 1024
_BOM = b"\xef\xbb\xbf"
_MARKDOWN = re.compile(r"^(#{1,6} |```|\* |- \[|\|.*\|\s*$)", re.MULTILINE)
_NUMBER = re.compile(r"^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$")


@dataclass(frozen=True)
class Source:
    path: Path
    records: list[Record]  # every JSON value with the line it starts on
    document: bool  # the file is a single JSON value (pretty-printed or on one line)
    crowded_lines: tuple[int, ...]  # lines that held more than one value
    had_bom: bool
    warnings: tuple[LineWarning, ...] = ()  # lines skipped or repaired, in line order

    @property
    def needs_clean_copy(self) -> bool:
        """Whether a line-based reader would misread the bytes on disk."""
        return bool(self.crowded_lines) or self.had_bom or bool(self.warnings)


def file_kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path) -> BinaryIO:
    """Open a regular file for reading; anything else is an ``IngestError``.

    Non-blocking, so that a FIFO swapped in after discovery opens at once (and
    is then refused) instead of waiting for a writer that never comes.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise IngestError(path, f"cannot read the file: {error.strerror or error}") from None
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise IngestError(path, f"cannot read the file: it is {kind}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path) -> bytes:
    """All the bytes of a regular file (see ``open_regular``)."""
    with open_regular(path) as handle:
        try:
            return handle.read()
        except OSError as error:
            raise IngestError(path, f"cannot read the file: {error.strerror or error}") from None


def read_source(path: Path, data: bytes | None = None) -> Source | NotTrajectory:
    """The file's JSON values; ``data`` is its bytes when the caller has read them already."""
    if data is not None:
        return _sniff(path, data[:HEAD_BYTES]) or _parse(path, data)
    with open_regular(path) as handle:
        try:
            head = handle.read(HEAD_BYTES)
            verdict = _sniff(path, head)
            if verdict is not None:
                return verdict
            data = head + handle.read()
        except OSError as error:
            raise IngestError(path, f"cannot read the file: {error.strerror or error}") from None
    return _parse(path, data)


def _sniff(path: Path, head: bytes) -> NotTrajectory | None:
    """Decide from the first bytes whether the file is JSON at all."""
    body = head.removeprefix(_BOM)
    stripped = body.lstrip(b" \t\r\n")
    if not stripped:
        if len(head) < HEAD_BYTES:
            raise IngestError(path, "the file is empty")
        return None  # a long run of blank space: let the full parse judge it
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or stripped[1:2] == b"\x00":
        text = _utf16_head(head)
        if text.lstrip()[:1] in ("{", "["):
            raise IngestError(path, "the file is UTF-16 encoded; trajectories must be UTF-8", 1)
        return NotTrajectory("not a trajectory: UTF-16 text")
    if stripped[:1] in (b"{", b"["):
        return None
    if b"\x00" in head:
        return NotTrajectory("not a trajectory: binary file")
    text = head.decode("utf-8", errors="replace")
    # Output printed before the first event (a warning, a banner) is a foreign line, not a
    # reason to call the log plain text.
    if b"\n{" in head and _log_kind(sniff_records(text, SNIFF_RECORDS)):
        return None
    return NotTrajectory(_describe_text(path, text))


def _utf16_head(head: bytes) -> str:
    for encoding in ("utf-16", "utf-16-le"):
        try:
            return head[: len(head) // 2 * 2].decode(encoding)
        except UnicodeDecodeError:
            continue
    return ""


_CODE_SUFFIXES = frozenset(
    {".py", ".js", ".ts", ".go", ".rs", ".sh", ".toml", ".yaml", ".yml", ".cfg"}
)


def _describe_text(path: Path, text: str) -> str:
    # A `# comment` line would pass for a markdown heading, so code is named by its suffix first.
    if path.suffix.lower() in _CODE_SUFFIXES:
        return f"not a trajectory: source or config file ({path.suffix.lower()})"
    if path.suffix.lower() in (".md", ".markdown") or _MARKDOWN.search(text):
        return "not a trajectory: markdown"
    if _NUMBER.match(text):
        return "not a trajectory: a single number (like a Harbor verifier reward.txt)"
    return "not a trajectory: plain text"


def _log_kind(records: list[Record]) -> bool:
    kind = classify(records)
    return kind is not None and kind.format != "atif"


def _decode(data: bytes) -> tuple[str, list[LineWarning]]:
    """The text of the file; a line that is not UTF-8 is decoded with U+FFFD and reported."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    lines: list[str] = []
    warnings: list[LineWarning] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            lines.append(raw.decode("utf-8", errors="replace"))
            reason = (
                f"line {number} is not UTF-8: byte 0x{raw[error.start]:02x} and any others "
                "that cannot be decoded were replaced with U+FFFD"
            )
            warnings.append(LineWarning(number, reason))
    return "\n".join(lines), warnings


def _parse(path: Path, data: bytes) -> Source | NotTrajectory:
    had_bom = data.startswith(_BOM)
    if had_bom:
        data = data[len(_BOM) :]
    starts_like_json = data.lstrip(b" \t\r\n")[:1] in (b"{", b"[")
    text, warnings = _decode(data)

    first = next(iter_lines(text), None)
    if first is None:
        raise IngestError(path, "the file holds only blank space")
    first_number, first_line = first
    document_error: IngestError | None = None
    try:
        values_on_line(first_line)
    except json.JSONDecodeError:
        # Not one value per line: a pretty-printed document, a broken first line, or JSON
        # Lines after something else printed first.
        try:
            value = _document(path, text)
        except IngestError as error:
            document_error = error
        else:
            if may_hold_surrogates(text) and _replace_surrogates(path, value):
                warnings.append(LineWarning(first_number, _surrogate_reason(first_number)))
            return Source(path, [Record(first_number, value)], True, (), had_bom, tuple(warnings))
    except (ValueError, RecursionError):
        pass  # NaN or nesting on line 1: that line is skipped like any other bad line

    records, crowded, bad = read_records(text)
    if document_error is not None and not _log_kind(records):
        if not starts_like_json:
            return NotTrajectory(_describe_text(path, text[:HEAD_BYTES]))
        raise document_error
    if not records:
        first_bad = bad[0]
        raise IngestError(path, first_bad.reason, first_bad.line)
    document = len(records) == 1 and not bad
    if not document:
        records = _objects_only(records, bad)
    if may_hold_surrogates(text):
        warnings.extend(
            LineWarning(record.line, _surrogate_reason(record.line))
            for record in records
            if _replace_surrogates(path, record.value)
        )
    # A line skipped whole needs no word about the bytes that were repaired in it.
    skipped = {warning.line for warning in bad}
    warnings = [w for w in warnings if w.line not in skipped] + bad
    warnings.sort(key=lambda warning: warning.line)
    return Source(path, records, document, tuple(crowded), had_bom, tuple(warnings))


def _surrogate_reason(line: int) -> str:
    return (
        f"line {line} escapes a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text; "
        "it was replaced with U+FFFD"
    )


def _replace_surrogates(path: Path, value: Any) -> bool:
    """Repair ``value`` in place; whether it held a lone surrogate."""
    try:
        return replace_surrogates(value)[1]
    except RecursionError:
        raise IngestError(path, "invalid JSON: JSON nested too deeply to read") from None


def _objects_only(records: list[Record], bad: list[LineWarning]) -> list[Record]:
    """JSON Lines logs are made of objects; any other value on a line is foreign."""
    kept = []
    for record in records:
        if isinstance(record.value, dict):
            kept.append(record)
            continue
        reason = f"line {record.line} holds {_json_name(record.value)}, not a JSON object"
        bad.append(LineWarning(record.line, reason))
    return kept


def _json_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "null"


def _document(path: Path, text: str) -> Any:
    try:
        return DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise IngestError(
            path,
            f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}",
            error.lineno,
        ) from None
    except (ValueError, RecursionError) as error:
        raise IngestError(path, f"invalid JSON: {describe_error(error)}") from None


def describe(source: Source) -> str:
    """Why a file that parsed as JSON is not a trajectory."""
    value = source.records[0].value if source.records else None
    if not source.document:
        return (
            "not a trajectory: JSON Lines that match no supported agent log "
            "(Claude Code, Codex, pi)"
        )
    if isinstance(value, list):
        return "not a trajectory: a JSON array (no supported format is a top-level array)"
    if not isinstance(value, dict):
        return "not a trajectory: a single JSON value"
    if "trial_name" in value or ("task_name" in value and "verifier_result" in value):
        return "not a trajectory: Harbor trial result.json"
    if isinstance(value.get("trajectory"), list) and ("history" in value or "info" in value):
        return "not a trajectory: SWE-agent .traj (unsupported format)"
    if "checkpoint_id" in value and "session_id" in value:
        return "not a trajectory: Entire checkpoint metadata.json"
    if value and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
    ):
        return "not a trajectory: a flat map of numbers (like a Harbor verifier reward.json)"
    return "not a trajectory: a JSON document without an ATIF schema_version"
