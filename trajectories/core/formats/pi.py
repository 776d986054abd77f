"""pi session logs to ATIF-v1.7.

atif-make has no pi parser, so this is one, built on atif-make's own ATIF
dataclasses so that its output has the same shape and serialisation as the
other converters'.

Two layouts exist. Version 1 is linear: a ``session`` header, then entries in
order. Version 2 and later (3 is what OpenClaw writes) is a tree: every entry
has an ``id`` and a ``parentId`` and branching appends a new child of an older
entry, so the file holds abandoned branches too. As pi does when it resumes, the
active branch is the path from the last entry written back to the root; entries
off that path are not part of the conversation and are left out (their count
is in ``side_data["pi_tree"]``). When lines of the file were lost (skipped as
bad), the path can reach a parent that is on none of the lines read: it then
continues with the entry written just before, where an append-only log keeps
an entry's parent unless it branched, and a warning says so.

Mapping:

* ``user`` -> user step; ``assistant`` -> agent step with text, ``thinking``
  as ``reasoning_content``, ``toolCall`` parts as tool calls, ``usage`` as
  metrics (prompt tokens include cache reads and writes, as atif-make counts
  them for Claude Code) and ``model`` as the step's model;
* ``toolResult`` -> an observation result on the step that made the call,
  ``isError`` kept as ``extra.is_error``; the tool's ``details`` (an edit's
  diff, an exec's exit code and cwd) go to ``side_data["tool_results"]``;
* ``bashExecution`` (a command the *user* ran with ``!``) -> a user step whose
  message is ``!command``, output as its observation and
  ``extra.user_shell = {command, exit_code, cancelled, truncated}``;
* ``compaction``, ``branch_summary``, ``custom_message`` and the summary or
  extension message roles -> system steps carrying their text;
* ``model_change`` and ``thinking_level_change`` set the model and reasoning
  effort of later agent steps; other entry types are bookkeeping, counted in
  ``side_data["skipped_entries"]``.
"""

from __future__ import annotations

import base64
import binascii
from collections import Counter
from pathlib import Path
from typing import Any

from atif_make.atif import (
    Agent,
    ContentPart,
    ImageSource,
    MediaStore,
    Metrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
    iso_or_none,
    sum_metrics,
)

from .converter import media_data, to_dict
from .meta import Hints
from .model import IngestError, LineWarning
from .source import Source

_SUMMARY_ROLES = {"branchSummary": "branch_summary", "compactionSummary": "compaction"}
_EXTENSION_ROLES = ("custom", "hookMessage")

Entry = tuple[int, dict[str, Any]]  # (line, entry)


def convert_pi(source: Source) -> tuple[dict[str, Any], dict[str, Any], Hints]:
    path = source.path
    entries: list[Entry] = []
    for record in source.records:
        if not isinstance(record.value, dict):
            raise IngestError(path, f"line {record.line} is not a JSON object", record.line)
        entries.append((record.line, record.value))

    header: dict[str, Any] = {}
    if entries and entries[0][1].get("type") == "session":
        header = entries.pop(0)[1]
    version = header.get("version")
    tree = (isinstance(version, int) and version >= 2) or any("parentId" in e for _, e in entries)
    side: dict[str, Any] = {}
    spliced: list[LineWarning] = []
    if tree:
        total = sum(1 for _, entry in entries if isinstance(entry.get("id"), str))
        entries = _active_branch(path, entries, spliced if source.warnings else None)
        side["pi_tree"] = {
            "leaf_id": entries[-1][1]["id"] if entries else None,
            "on_branch": len(entries),
            "off_branch": total - len(entries),
        }

    builder = _Builder(path, header)
    for line, entry in entries:
        builder.add(line, entry)

    layout = "tree" if tree else "linear"
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    agent_extra = {
        "cwd": cwd,
        "provider": header.get("provider"),
        "session_version": version if isinstance(version, int) else 1,
    }
    run_extra = {
        "started_at": iso_or_none(header.get("timestamp")),
        "name": builder.name,
        "branched_from": header.get("branchedFrom") or header.get("parentSession"),
    }
    trajectory = Trajectory(
        agent=Agent(
            name="pi",
            version="unknown",  # pi does not write its version into the session
            model_name=builder.first_model,
            extra={k: v for k, v in agent_extra.items() if v is not None},
        ),
        steps=builder.steps,
        session_id=header.get("id") if isinstance(header.get("id"), str) else None,
        trajectory_id=path.stem,
        final_metrics=sum_metrics(builder.steps),
        notes=f"Converted from pi session ({layout} layout): {path}",
        extra={k: v for k, v in run_extra.items() if v is not None} or None,
        media=builder.media or None,
    )
    try:
        document = to_dict(trajectory)
    except RecursionError:
        raise IngestError(path, "the pi session is nested too deeply to convert") from None

    side["tool_results"] = builder.details
    side["cwd"] = builder.cwd
    if builder.skipped:
        side["skipped_entries"] = dict(builder.skipped)
    if builder.media:
        side["media"] = media_data(builder.media)
    hints = Hints(
        session_id=trajectory.session_id,
        cwd=cwd,
        started_at=iso_or_none(header.get("timestamp")),
        warnings=tuple(spliced),
    )
    return document, side, hints


def _active_branch(
    path: Path, entries: list[Entry], spliced: list[LineWarning] | None = None
) -> list[Entry]:
    """The path from the last entry written back to the root, in order.

    ``spliced``, when given (lines of the file were lost), collects a warning for
    each missing parent stepped over; without it a missing parent is an error.
    """
    by_id: dict[str, Entry] = {}
    position: dict[str, int] = {}
    leaf: str | None = None
    for index, (line, entry) in enumerate(entries):
        entry_id = entry.get("id")
        if isinstance(entry_id, str):
            by_id[entry_id] = (line, entry)
            position[entry_id] = index
            leaf = entry_id
    branch: list[Entry] = []
    seen: set[str] = set()
    current, child = leaf, None
    while current is not None:
        if current in seen:
            line = by_id[current][0]
            raise IngestError(
                path, f"entry {current!r} is its own ancestor (a parentId cycle)", line
            )
        found = by_id.get(current)
        if found is None:
            child_line = by_id[child][0] if child else None
            if spliced is None or child is None or child_line is None:
                raise IngestError(
                    path,
                    f"an entry names parent {current!r}, which is not in the file",
                    child_line,
                )
            before = _written_before(entries, position[child], seen)
            where = f"line {before[0]}" if before else "nothing: the branch starts there"
            spliced.append(
                LineWarning(
                    child_line,
                    f"line {child_line} names parent {current!r}, which is on no line read; "
                    f"the branch continues with the entry written before it, {where}",
                )
            )
            current = before[1]["id"] if before else None
            continue
        seen.add(current)
        branch.append(found)
        child = current
        parent = found[1].get("parentId")
        current = parent if isinstance(parent, str) else None
    branch.reverse()
    return branch


def _written_before(entries: list[Entry], index: int, seen: set[str]) -> Entry | None:
    for line, entry in reversed(entries[:index]):
        entry_id = entry.get("id")
        if isinstance(entry_id, str) and entry_id not in seen:
            return line, entry
    return None


class _Builder:
    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self.steps: list[Step] = []
        self.media = MediaStore()
        self.details: dict[str, Any] = {}
        self.cwd: dict[str, str] = {}
        self.skipped: Counter[str] = Counter()
        self.name: str | None = None
        self.model = _str(header.get("modelId"))
        self.first_model = self.model
        self.thinking = _str(header.get("thinkingLevel"))
        self._calls: dict[str, Step] = {}

    def add(self, line: int, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        stamp = iso_or_none(entry.get("timestamp"))
        if kind == "message":
            message = entry.get("message")
            if not isinstance(message, dict):
                raise IngestError(self.path, "a message entry has no message object", line)
            self._message(message, stamp, line)
        elif kind == "compaction":
            compaction = {
                "tokens_before": entry.get("tokensBefore"),
                "first_kept": entry.get("firstKeptEntryId", entry.get("firstKeptEntryIndex")),
            }
            self._system(entry.get("summary"), stamp, {"compaction": compaction})
        elif kind == "branch_summary":
            summary = {"from_id": entry.get("fromId")}
            self._system(entry.get("summary"), stamp, {"branch_summary": summary})
        elif kind == "custom_message":
            self._system(entry.get("content"), stamp, {"custom_type": entry.get("customType")})
        elif kind == "model_change":
            self.model = _str(entry.get("modelId")) or self.model
            self.first_model = self.first_model or self.model
        elif kind == "thinking_level_change":
            self.thinking = _str(entry.get("thinkingLevel")) or self.thinking
        elif kind == "session_info":
            self.name = _str(entry.get("name")) or self.name
        else:
            self.skipped[str(kind)] += 1

    def _append(self, step: Step) -> Step:
        step.step_id = len(self.steps) + 1
        self.steps.append(step)
        return step

    def _message(self, message: dict[str, Any], stamp: str | None, line: int) -> None:
        role = str(message.get("role"))
        if role == "user":
            self._append(Step(0, "user", self._content(message.get("content")), stamp))
        elif role == "assistant":
            self._assistant(message, stamp, line)
        elif role == "toolResult":
            self._tool_result(message, stamp)
        elif role == "bashExecution":
            self._user_shell(message, stamp)
        elif role in _SUMMARY_ROLES:
            self._system(message.get("summary"), stamp, {_SUMMARY_ROLES[role]: {}})
        elif role in _EXTENSION_ROLES:
            self._system(message.get("content"), stamp, {"custom_type": message.get("customType")})
        else:
            self.skipped[f"message/{role}"] += 1

    def _assistant(self, message: dict[str, Any], stamp: str | None, line: int) -> None:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        for index, part in enumerate(parts if isinstance(parts, list) else ()):
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "thinking" and isinstance(part.get("thinking"), str):
                thoughts.append(part["thinking"])
            elif kind == "toolCall":
                arguments = part.get("arguments")
                calls.append(
                    ToolCall(
                        tool_call_id=_str(part.get("id")) or f"call_{line}_{index}",
                        function_name=_str(part.get("name")) or "unknown",
                        arguments=arguments if isinstance(arguments, dict) else {"raw": arguments},
                    )
                )
        model = _str(message.get("model")) or self.model
        self.first_model = self.first_model or model
        step = self._append(
            Step(
                0,
                "agent",
                "\n".join(texts),
                stamp,
                model_name=model,
                reasoning_content="\n".join(thoughts).strip() or None,
                reasoning_effort=self.thinking if self.thinking not in (None, "off") else None,
                tool_calls=calls or None,
                metrics=_metrics(message.get("usage")),
                llm_call_count=1,
            )
        )
        stop = message.get("stopReason")
        extra = {
            "stop_reason": stop if stop not in (None, "stop", "toolUse") else None,
            "error_message": message.get("errorMessage"),
        }
        step.extra = {k: v for k, v in extra.items() if v is not None} or None
        for call in calls:
            self._calls[call.tool_call_id] = step

    def _tool_result(self, message: dict[str, Any], stamp: str | None) -> None:
        call_id = _str(message.get("toolCallId"))
        content = self._content(message.get("content"))
        result = ObservationResult(source_call_id=call_id, content=content or None)
        if "isError" in message:
            result.extra = {"is_error": bool(message["isError"])}
        details = message.get("details")
        if call_id is not None and details is not None:
            self.details[call_id] = details
            if isinstance(details, dict) and isinstance(details.get("cwd"), str):
                self.cwd[call_id] = details["cwd"]
        owner = self._calls.get(call_id) if call_id else None
        if owner is None:
            # A result whose call is not on this branch: kept, but it cannot
            # point at a call ATIF could resolve.
            result.source_call_id = None
            result.extra = {**(result.extra or {}), "orphan_tool_call_id": call_id}
            step = self._append(Step(0, "system", "", stamp))
            step.observation = Observation(results=[result])
            return
        if owner.observation is None:
            owner.observation = Observation(results=[])
        owner.observation.results.append(result)

    def _user_shell(self, message: dict[str, Any], stamp: str | None) -> None:
        command = message.get("command")
        output = message.get("output")
        typed = command if isinstance(command, str) else ""
        step = self._append(Step(0, "user", f"!{typed}", stamp))
        result = ObservationResult(content=output if isinstance(output, str) and output else None)
        step.observation = Observation(results=[result])
        shell = {
            "command": command,
            "exit_code": message.get("exitCode"),
            "cancelled": message.get("cancelled"),
            "truncated": message.get("truncated"),
            "full_output_path": message.get("fullOutputPath"),
        }
        step.extra = {"user_shell": {k: v for k, v in shell.items() if v is not None}}

    def _system(self, content: Any, stamp: str | None, extra: dict[str, Any]) -> None:
        step = self._append(Step(0, "system", self._content(content), stamp))
        step.extra = extra

    def _content(self, value: Any) -> str | list[ContentPart]:
        """Plain text, or content parts when the message carries images."""
        if isinstance(value, str):
            return value
        parts: list[ContentPart] = []
        images = False
        for part in value if isinstance(value, list) else ():
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(ContentPart(type="text", text=part["text"]))
            elif part.get("type") == "image":
                image = self._image(part)
                if image is not None:
                    parts.append(image)
                    images = True
        if not images:
            return "\n".join(part.text or "" for part in parts)
        return parts

    def _image(self, part: dict[str, Any]) -> ContentPart | None:
        data = part.get("data")
        if not isinstance(data, str) or not data:
            return None
        try:
            raw = base64.b64decode(data, validate=False)
        except (ValueError, binascii.Error):
            return None
        where = self.media.add(raw, str(part.get("mimeType") or "image/png"))
        media_type = self.media.items[where.rsplit("/", 1)[-1]].media_type
        return ContentPart(type="image", source=ImageSource(media_type=media_type, path=where))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return 0


def _money(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _metrics(usage: Any) -> Metrics | None:
    if not isinstance(usage, dict):
        return None
    cache_read = _count(usage.get("cacheRead"))
    cache_write = _count(usage.get("cacheWrite"))
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    metrics = Metrics(
        prompt_tokens=_count(usage.get("input")) + cache_read + cache_write,
        completion_tokens=_count(usage.get("output")),
        cached_tokens=cache_read,
        cost_usd=_money(total),
    )
    if cache_write:
        metrics.extra = {"cache_write_tokens": cache_write}
    return metrics
