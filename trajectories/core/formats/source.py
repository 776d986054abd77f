"""Reading a file into JSON values, and naming what a file is when it is not a trajectory.

One strict pass: the file is decoded as UTF-8 and parsed either as one JSON
document (pretty-printed or not) or as JSON Lines, and the first bad line is an
``IngestError`` with its number. Files that are plainly something else (text,
Markdown, binary) are recognised from their first bytes without reading the rest.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .jsonl import DECODER, Record, describe_error, iter_lines, read_records, values_on_line
from .model import IngestError, NotTrajectory

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

    @property
    def needs_clean_copy(self) -> bool:
        """Whether a line-based reader would misread the bytes on disk."""
        return bool(self.crowded_lines) or self.had_bom


def read_source(path: Path) -> Source | NotTrajectory:
    try:
        with path.open("rb") as handle:
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
    return NotTrajectory(_describe_text(path, head.decode("utf-8", errors="replace")))


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


def _parse(path: Path, data: bytes) -> Source:
    had_bom = data.startswith(_BOM)
    if had_bom:
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start]
        raise IngestError(
            path,
            f"the file is not UTF-8: byte 0x{byte:02x} on line {line} cannot be decoded "
            "(re-save the file as UTF-8)",
            line,
        ) from None

    first = next(iter_lines(text), None)
    if first is None:
        raise IngestError(path, "the file holds only blank space")
    first_number, first_line = first
    try:
        values_on_line(first_line)
    except json.JSONDecodeError:
        # Not one value per line: a pretty-printed document, or a broken first line.
        return Source(path, [Record(first_number, _document(path, text))], True, (), had_bom)
    except (ValueError, RecursionError) as error:
        reason = f"line {first_number} is not valid JSON: {describe_error(error)}"
        raise IngestError(path, reason, first_number) from None

    records, crowded, bad = read_records(text)
    if bad is not None:
        last = text.rstrip().count("\n") + 1
        tail = " (the file ends mid-line, as if cut off)" if bad.line == last else ""
        raise IngestError(path, f"line {bad.line} is not valid JSON: {bad.reason}{tail}", bad.line)
    return Source(path, records, len(records) == 1, tuple(crowded), had_bom)


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
