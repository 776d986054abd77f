"""Reading a tool result: its text, whether the call ran, and a shell command's exit status.

Each agent reports outcomes its own way, and each way is read as that agent writes it:

- Claude Code: ``is_error`` on the result (kept by atif-make in ``extra``) with the text
  starting ``Exit code N``; a tool_use_error or a refusal means the call never ran;
  ``toolUseResult.interrupted`` in side data means it was cut off.
- Codex: ``exec_command`` text carries ``Process exited with code N`` (possibly only in a later
  ``write_stdin`` poll on the same session); older ``shell`` and ``apply_patch`` results are JSON
  with ``metadata.exit_code``; ``codex exec --json`` puts ``exit_code`` in the result's extra.
- pi / OpenClaw: ``isError`` in extra and ``Command exited with code N`` in the text; OpenClaw's
  ATIF puts ``exec_exit_code`` on the step that carries the result.
- Anything else: a numeric ``exit_code``/``exitCode``/``returncode`` in the result's extra.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exec_exit_code")
_ERROR_KEYS = ("is_error", "isError", "error")

_PROCESS_EXITED = re.compile(r"Process exited with code (-?\d+)")
_PROCESS_RUNNING = re.compile(r"Process running with session ID (\d+)")
_COMMAND_EXITED = re.compile(r"Command exited with code (-?\d+)")
_EXIT_CODE_HEAD = re.compile(r"^\s*Exit code:?\s*(-?\d+)")
_CODEX_OUTPUT = re.compile(r"^(?:.*\n)*?Output:\n", re.MULTILINE)
_REFUSED = re.compile(
    r"<tool_use_error>|doesn't want to proceed|tool use was rejected|Permission to use .* "
    r"(?:has been )?denied|was blocked|^Error: Blocked",
    re.IGNORECASE,
)


class CallOutcome(StrEnum):
    OK = "ok"
    FAILED = "failed"  # ran and failed (nonzero exit, interrupted, timed out, tool error)
    UNKNOWN = "unknown"  # ran; nothing says how it ended
    NOT_RUN = "not_run"  # refused, blocked or rejected before doing anything
    MISSING = "missing"  # no result recorded at all


@dataclass(frozen=True, slots=True)
class Result:
    """A tool call's result as the replay sees it."""

    text: str
    extra: Mapping[str, Any] = field(default_factory=dict)
    side: Any = None  # Claude Code's raw toolUseResult when side data has it
    media: bool = False  # the content had non-text parts (an image read, a screenshot)


@dataclass(frozen=True, slots=True)
class Status:
    outcome: CallOutcome
    exit_code: int | None = None


def content_text(content: Any) -> str:
    """The text of an ATIF result ``content``: a string or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, str):
                texts.append(part)
        return "".join(texts)
    return str(content)


def readable_text(content: Any) -> str:
    """A message or result as a person reads it (pages, preference pairs, chat exports): text
    parts joined by newlines, any other part as a marker of its kind (``[image: image/png]``).

    ``content_text`` above is the replay's: the text alone, joined as the tool returned it.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                parts.append(str(part.get("text") or ""))
            elif isinstance(part, Mapping):
                source = part.get("source")
                media = source.get("media_type") if isinstance(source, Mapping) else None
                kind = part.get("type", "part")
                parts.append(f"[{kind}: {media}]" if media else f"[{kind}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return json.dumps(content, indent=2, ensure_ascii=False, default=str)


def has_media(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") not in (None, "text") for part in content
    )


def _json_object(text: str) -> Mapping[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    return None


def _extra_exit(extra: Mapping[str, Any]) -> int | None:
    for key in _EXIT_KEYS:
        code = _int(extra.get(key))
        if code is not None:
            return code
    metadata = extra.get("metadata")
    if isinstance(metadata, Mapping):
        return _int(metadata.get("exit_code"))
    return None


def _extra_error(extra: Mapping[str, Any]) -> bool | None:
    for key in _ERROR_KEYS:
        value = extra.get(key)
        if isinstance(value, bool):
            return value
    return None


def text_exit(text: str) -> int | None:
    """An exit code stated in a result's text, in any of the formats agents use."""
    found = _PROCESS_EXITED.findall(text)
    if found:
        return int(found[-1])
    obj = _json_object(text)
    if obj is not None:
        metadata = obj.get("metadata")
        if isinstance(metadata, Mapping) and _int(metadata.get("exit_code")) is not None:
            return _int(metadata.get("exit_code"))
    found = _COMMAND_EXITED.findall(text)
    if found:
        return int(found[-1])
    head = _EXIT_CODE_HEAD.match(text)
    if head:
        return int(head.group(1))
    return None


def shell_status(result: Result | None, *, flags_failures: bool = False) -> Status:
    """How a shell command ended.

    ``flags_failures``: the agent marks every failed call with an error flag (Claude Code's
    ``is_error``), so a result without one succeeded; atif-make and Harbor drop the flag when
    it is false.
    """
    if result is None:
        return Status(CallOutcome.MISSING)
    text, extra = result.text, result.extra
    side = result.side if isinstance(result.side, Mapping) else None
    error = _extra_error(extra)
    if error is None and flags_failures:
        error = bool(_EXIT_CODE_HEAD.match(text))
    code = _extra_exit(extra)
    if code is None and side is not None:
        code = _extra_exit(side)  # pi's bash details carry exitCode
    if code is None and error is not False:
        # An explicit "no error" is the agent's own verdict; numbers in the text of a
        # successful command are program output, not a status.
        code = text_exit(text)
    if code is not None:
        return Status(CallOutcome.OK if code == 0 else CallOutcome.FAILED, code)
    if _PROCESS_RUNNING.search(text):
        return Status(CallOutcome.UNKNOWN)  # a Codex session that never reported its end
    if error:
        if _REFUSED.search(text) or (isinstance(result.side, str) and _REFUSED.search(result.side)):
            return Status(CallOutcome.NOT_RUN)
        return Status(CallOutcome.FAILED)
    if side is not None and side.get("interrupted"):
        return Status(CallOutcome.FAILED)
    if error is False:
        if side is not None and side.get("returnCodeInterpretation"):
            # Claude Code judged a nonzero status harmless (grep found nothing); the number
            # itself is not recorded.
            return Status(CallOutcome.OK)
        return Status(CallOutcome.OK, 0)
    if re.search(r"Command (timed out|aborted)", text):
        return Status(CallOutcome.FAILED)
    return Status(CallOutcome.UNKNOWN)


def tool_status(result: Result | None, *, patch: bool = False) -> CallOutcome:
    """Whether a file tool (write, edit, read; ``patch`` for apply_patch) did its work."""
    if result is None:
        return CallOutcome.MISSING
    text = result.text
    if _extra_error(result.extra) or text.lstrip().startswith("<tool_use_error>"):
        return CallOutcome.FAILED
    code = _extra_exit(result.extra)
    if code is None and patch:
        code = text_exit(text)
    if code is not None:
        return CallOutcome.OK if code == 0 else CallOutcome.FAILED
    if patch and not re.search(r"\bSuccess\b|Done!", text):
        if re.search(r"verification failed|invalid patch|failed to|error", text, re.IGNORECASE):
            return CallOutcome.FAILED
        return CallOutcome.UNKNOWN
    return CallOutcome.OK


def shell_output(text: str) -> str:
    """The program output of a shell result, without the transport framing around it."""
    obj = _json_object(text)
    if obj is not None and isinstance(obj.get("output"), str):
        return obj["output"]
    if text.startswith(("Chunk ID:", "Wall time:", "Exit code:")) and "\nOutput:\n" in text:
        return text.split("\nOutput:\n", 1)[1]
    return text


def codex_session(text: str) -> int | None:
    """The session id a Codex exec_command left running, to be polled by write_stdin."""
    if _PROCESS_EXITED.search(text):
        return None
    found = _PROCESS_RUNNING.search(text)
    return int(found.group(1)) if found else None


_METADATA = re.compile(r"\n\[metadata\] (\{.*\})\s*$", re.DOTALL)


def metadata_trailer(text: str) -> Mapping[str, Any] | None:
    """Harbor's Claude Code conversion appends the raw toolUseResult as ``[metadata] {…}``."""
    found = _METADATA.search(text)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None
