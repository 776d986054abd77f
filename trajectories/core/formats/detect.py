"""Which format a file holds, decided by its content and never by its name.

The record rules for Claude Code and Codex are atif-make's (``atif_make.detect``);
they are restated here because atif-make recognises ATIF by the ``.json``
suffix and reads only cleanly separated lines, and ingest must do neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .jsonl import DECODER, Record, sniff_records

# Enough lines to get past the hook events and snapshots that open real logs.
SNIFF_RECORDS = 60
SNIFF_BYTES = 1024 * 1024

_CLAUDE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "mode",
        "permission-mode",
        "file-history-snapshot",
        "attachment",
        "queue-operation",
    }
)
_CODEX_ENVELOPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg"})
_PI_ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution"})


@dataclass(frozen=True)
class Kind:
    format: str  # one of FORMATS
    variant: str  # atif-make's name for the shape ("claude-code-transcript", ...) or "pi"


def is_atif(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("schema_version", "")).startswith("ATIF")


def classify(records: Sequence[Record]) -> Kind | None:
    if records and is_atif(records[0].value):
        return Kind("atif", "atif")
    for record in records[:SNIFF_RECORDS]:
        kind = _classify_record(record.value)
        if kind is not None:
            return kind
    return None


def _classify_record(line: Any) -> Kind | None:
    if not isinstance(line, dict):
        return None
    kind = line.get("type")
    if not isinstance(kind, str):
        return None
    if (
        kind == "system"
        and line.get("subtype") == "init"
        and isinstance(line.get("session_id"), str)
    ):
        return Kind("claude-code", "claude-code-stream")
    if (
        isinstance(line.get("sessionId"), str)
        and isinstance(line.get("uuid"), str)
        and kind in _CLAUDE_TYPES
    ):
        return Kind("claude-code", "claude-code-transcript")
    if kind in _CODEX_ENVELOPES and isinstance(line.get("payload"), dict):
        return Kind("codex", "codex-rollout")
    if kind == "thread.started" and isinstance(line.get("thread_id"), str):
        return Kind("codex", "codex-exec")
    # pi: a `session` header, or a `message` entry wrapping a pi-shaped message.
    if kind == "session" and isinstance(line.get("id"), str) and "payload" not in line:
        return Kind("pi", "pi")
    message = line.get("message")
    if kind == "message" and isinstance(message, dict) and str(message.get("role")) in _PI_ROLES:
        return Kind("pi", "pi")
    return None


def detect(path: Path) -> str | None:
    """The format of a file from its first megabyte, or None when it is none of ours.

    Tolerant where ``load`` is strict: a truncated or garbled line is skipped, so
    a damaged log is still recognised for what it was meant to be.
    """
    try:
        with Path(path).open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
            complete = not handle.read(1)
    except OSError:
        return None
    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    if not complete:
        text = text[: text.rfind("\n") + 1]
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] == "{":
        version = top_level_value(text, start, "schema_version")
        if isinstance(version, str) and version.startswith("ATIF"):
            return "atif"
    kind = classify(sniff_records(text, SNIFF_RECORDS))
    return kind.format if kind else None


def top_level_value(text: str, start: int, key: str) -> Any:
    """One key's value from a JSON object that may be cut off partway.

    Walks the object's members with ``raw_decode`` and stops at the first that
    does not decode, so a large document need not be read whole to learn its
    schema version. Only top-level members count: a manifest that mentions an
    ATIF version deeper down is not an ATIF document.
    """
    pos = start + 1
    end = len(text)

    def skip(at: int) -> int:
        while at < end and text[at] in " \t\r\n":
            at += 1
        return at

    try:
        while True:
            pos = skip(pos)
            if pos >= end or text[pos] != '"':
                return None
            name, pos = DECODER.raw_decode(text, pos)
            pos = skip(pos)
            if text[pos : pos + 1] != ":":
                return None
            value, pos = DECODER.raw_decode(text, skip(pos + 1))
            if name == key:
                return value
            pos = skip(pos)
            if text[pos : pos + 1] != ",":
                return None
            pos += 1
    except (ValueError, RecursionError):
        return None
