"""Claude Code session logs: converted by atif-make, plus what replay needs that it drops.

atif-make keeps the conversation but not two things replay depends on: the raw
``toolUseResult`` of each tool call (``originalFile`` and ``structuredPatch`` of
Edit/Write, ``file.content`` of Read, stdout/stderr of Bash) and the ``cwd``
each line was written in. Both are collected here, in the same pass that
validated the file, keyed by ``tool_use_id``.

A subagent's own log (``<session>/subagents/agent-<id>.jsonl``, or an older
``agent-<id>.jsonl`` beside the session) is entirely sidechain and carries the
*parent's* ``sessionId``: that becomes ``parent_session_id``, and the subagent's
own ``agentId`` its session id (``agent-<id>``, as its file is named).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .converter import Beside, run_atif_make, strip_subagents
from .folders import TEAM_CAP, Folders
from .meta import Hints, recorded_git
from .model import IngestError
from .source import Source

LABEL = "Claude Code log"


def convert_claude_code(
    source: Source, variant: str, folders: Folders
) -> tuple[dict[str, Any], dict[str, Any], Hints]:
    scan = _scan(source)
    beside = _beside(source.path, variant, folders)
    document, media, notes = run_atif_make(source, variant, LABEL, beside)
    subagents = strip_subagents(document, lambda sub: _subagent_file(source.path, sub))

    calls = {
        call["tool_call_id"]
        for step in document.get("steps") or ()
        for call in step.get("tool_calls") or ()
        if isinstance(call.get("tool_call_id"), str)
    }
    side: dict[str, Any] = {
        "tool_results": {k: v for k, v in scan.results.items() if k in calls},
        "cwd": {k: v for k, v in scan.cwd.items() if k in calls},
    }
    if subagents:
        side["subagents"] = subagents
    if media:
        side["media"] = media
    if notes:
        side["normalised"] = notes
    if scan.branch:
        side["git"] = recorded_git(branch=scan.branch)

    sidechain = scan.content_lines > 0 and scan.sidechain_lines == scan.content_lines
    is_subagent = source.path.parent.name == "subagents" or (sidechain and bool(scan.agent_id))
    hints = Hints(
        session_id=f"agent-{scan.agent_id}" if is_subagent and scan.agent_id else None,
        parent_session_id=scan.session_id if is_subagent else None,
        is_subagent=is_subagent,
    )
    return document, side, hints


def _beside(path: Path, variant: str, folders: Folders) -> Beside:
    """Which sessions beside this one atif-make may link as its teammates.

    It looks at every other ``*.jsonl`` in the folder, and links none when there
    are more than ``TEAM_CAP``: past the cap, not looking gives the same result
    without listing and resolving the whole folder again for every file.
    """
    if variant != "claude-code-transcript" or path.parent.name == "subagents":
        return Beside(direct=True)
    if folders.others(path) > TEAM_CAP:
        return Beside(direct=True, teammates=False)
    return Beside(direct=True, neighbours=folders.logs(path.parent))


class _Scan:
    __slots__ = (
        "agent_id",
        "branch",
        "content_lines",
        "cwd",
        "results",
        "session_id",
        "sidechain_lines",
    )

    def __init__(self) -> None:
        self.results: dict[str, Any] = {}
        self.cwd: dict[str, str] = {}
        self.session_id: str | None = None
        self.agent_id: str | None = None
        self.branch: str | None = None  # the first line's gitBranch: where the session started
        self.content_lines = 0
        self.sidechain_lines = 0


def _scan(source: Source) -> _Scan:
    scan = _Scan()
    for record in source.records:
        line = record.value
        if not isinstance(line, dict):
            raise IngestError(source.path, f"line {record.line} is not a JSON object", record.line)
        kind = line.get("type")
        if scan.session_id is None and isinstance(line.get("sessionId"), str):
            scan.session_id = line["sessionId"]
        if scan.agent_id is None and isinstance(line.get("agentId"), str):
            scan.agent_id = line["agentId"]
        if scan.branch is None and isinstance(line.get("gitBranch"), str) and line["gitBranch"]:
            scan.branch = line["gitBranch"]
        if kind not in ("user", "assistant"):
            continue
        scan.content_lines += 1
        if line.get("isSidechain"):
            scan.sidechain_lines += 1
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        if kind == "assistant":
            cwd = line.get("cwd")
            if isinstance(cwd, str):
                for block in content:
                    if _is_block(block, "tool_use", "id"):
                        scan.cwd.setdefault(block["id"], cwd)
        elif "toolUseResult" in line:
            ids = [b["tool_use_id"] for b in content if _is_block(b, "tool_result", "tool_use_id")]
            # One raw result per line; with several blocks it is unclear whose it is.
            if len(ids) == 1:
                scan.results[ids[0]] = line["toolUseResult"]
    return scan


def _is_block(block: Any, kind: str, key: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind and isinstance(block.get(key), str)


def _subagent_file(path: Path, sub: dict[str, Any]) -> str | None:
    agent_id = (sub.get("extra") or {}).get("agent_id")
    if not isinstance(agent_id, str):
        return None
    relative = Path(path.stem) / "subagents" / f"agent-{agent_id}.jsonl"
    try:
        return relative.as_posix() if (path.parent / relative).is_file() else None
    except OSError:
        return None
