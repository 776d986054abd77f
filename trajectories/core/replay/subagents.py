"""Subagents: which recorded session each spawning call started, and that session's recording.

    spawned(parent_atif, parent_side)          # {"toolu_01…": "agent-a434715"}
    replay(parent_atif, parent_side, root=…, blobs=…,
           subagents={"toolu_01…": Subagent("agent-a434715", child_atif, child_side)})

A Claude Code ``Task`` (or ``Agent``) call runs a subagent in the same working tree; its edits
live in the subagent's own log, not the parent's. Given that log, replay plays the subagent's
calls at the step where the spawning call returned, in the order the subagent made them, each
as an event marked with the subagent's session id. Without it, the call keeps its old meaning:
anything under the root may have changed (``tools.classify`` makes it a ``LostOp``). A subagent
launched in the background (``run_in_background``, "Async agent launched") keeps that meaning
even with its log: its call returned before its work, and when each edit landed relative to the
parent's own calls is not recorded.

The session id is the one ingest gives a subagent's log (``agent-<agentId>`` for Claude Code,
see ``formats/claude_code.py``). Three records name it, any one is enough: Claude Code's raw
Task result (``toolUseResult.agentId``), the ``subagents`` side data ingest keeps when it
removes the copies atif-make embedded (their file's path), and ATIF's
``subagent_trajectory_ref`` on the call's result (``extra.agent_id`` or ``trajectory_path``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .calls import ToolCall


@dataclass(frozen=True)
class Subagent:
    """A subagent's recorded session: what replay plays in place of its spawning call."""

    session_id: str
    atif: Mapping[str, Any]
    side_data: Mapping[str, Any] = field(default_factory=dict)


def spawned(atif: Mapping[str, Any], side_data: Mapping[str, Any]) -> dict[str, str]:
    """``{spawning tool_call_id: the subagent's session id}`` for every subagent recorded."""
    found: dict[str, str] = {}
    results = side_data.get("tool_results")
    for call_id, raw in (results if isinstance(results, Mapping) else {}).items():
        agent_id = raw.get("agentId") if isinstance(raw, Mapping) else None
        if isinstance(agent_id, str) and agent_id:
            found.setdefault(call_id, f"agent-{agent_id}")
    own = atif.get("session_id")
    entries = side_data.get("subagents")
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, Mapping) and isinstance(entry.get("tool_call_id"), str):
            name = _from_path(entry.get("path")) or _other(entry.get("session_id"), own)
            if name:
                found.setdefault(entry["tool_call_id"], name)
    for step in atif.get("steps") or ():
        observation = step.get("observation") if isinstance(step, Mapping) else None
        for result in (observation or {}).get("results") or ():
            call_id = result.get("source_call_id") if isinstance(result, Mapping) else None
            if not isinstance(call_id, str):
                continue
            for ref in result.get("subagent_trajectory_ref") or ():
                name = _from_ref(ref) if isinstance(ref, Mapping) else None
                if name:
                    found.setdefault(call_id, name)
    return found


def in_background(call: ToolCall) -> bool:
    """Whether ``call`` launched its subagent in the background instead of waiting for it."""
    if call.args.get("run_in_background") is True:
        return True
    result = call.result
    if result is None:
        return False
    raw = result.side if isinstance(result.side, Mapping) else {}
    return raw.get("status") == "async_launched" or result.text.startswith("Async agent launched")


def _from_ref(ref: Mapping[str, Any]) -> str | None:
    extra = ref.get("extra")
    agent_id = extra.get("agent_id") if isinstance(extra, Mapping) else None
    if isinstance(agent_id, str) and agent_id:
        return f"agent-{agent_id}"
    return _from_path(ref.get("trajectory_path"))


def _from_path(path: Any) -> str | None:
    """``agent-<id>`` from a Claude Code subagent file's name (``…/agent-a485154.jsonl``)."""
    if not isinstance(path, str):
        return None
    stem = posixpath.splitext(posixpath.basename(path))[0]
    return stem if stem.startswith("agent-") else None


def _other(session_id: Any, own: Any) -> str | None:
    # Claude Code's embedded subagents carry the parent's session id: no name of their own.
    return session_id if isinstance(session_id, str) and session_id and session_id != own else None
