"""Claude Code logs written line by line for tests, as Claude Code writes them.

``Log`` is the session JSONL of ``~/.claude/projects/<project>/<session>.jsonl`` (a subagent's when
``agent_id`` is given); ``Log.stream_json`` is the same session as ``claude -p --output-format
stream-json`` prints it on stdout (a Harbor run folder's ``claude-code.txt``): the same messages
as events, with no parent links or timestamps, between an ``init`` and a ``result`` event.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

MODEL = "claude-sonnet-4-5"


class Log:
    def __init__(
        self,
        *,
        session_id: str,
        cwd: str,
        agent_id: str | None = None,
        started: datetime = datetime(2026, 3, 1, 10, 0, tzinfo=UTC),
    ) -> None:
        self.session_id, self.cwd, self.agent_id, self.started = session_id, cwd, agent_id, started
        self.lines: list[dict[str, Any]] = []

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        n = len(self.lines) + 1
        when = self.started + timedelta(seconds=7 * n)
        line = {
            "parentUuid": self.lines[-1]["uuid"] if self.lines else None,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.1.0",
            "type": kind,
            "message": message,
            "uuid": f"{self.agent_id or 'p'}-{n:04d}",
            "timestamp": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            **extra,
        }
        if self.agent_id:
            line["agentId"] = self.agent_id
        self.lines.append(line)

    def user(self, text: str) -> Log:
        self._line("user", {"role": "user", "content": text})
        return self

    def say(self, text: str) -> Log:
        message = {"role": "assistant", "model": MODEL, "content": [{"type": "text", "text": text}]}
        self._line("assistant", message)
        return self

    def call(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        out: str,
        *,
        error: bool = False,
        raw: dict[str, Any] | None = None,
    ) -> Log:
        use = {"type": "tool_use", "id": call_id, "name": name, "input": args}
        message = {"role": "assistant", "model": MODEL, "content": [use]}
        self._line("assistant", message)
        result = {"type": "tool_result", "tool_use_id": call_id, "content": out, "is_error": error}
        self._line("user", {"role": "user", "content": [result]}, toolUseResult=raw or out)
        return self

    # -- the common tools, with the results Claude Code prints -----------------------------------

    def write(self, call_id: str, rel: str, content: str) -> Log:
        path = f"{self.cwd}/{rel}"
        raw = {"type": "create", "filePath": path, "content": content, "structuredPatch": []}
        args = {"file_path": path, "content": content}
        return self.call(call_id, "Write", args, f"File created successfully at: {path}", raw=raw)

    def edit(self, call_id: str, rel: str, old: str, new: str) -> Log:
        path = f"{self.cwd}/{rel}"
        args = {"file_path": path, "old_string": old, "new_string": new, "replace_all": False}
        return self.call(call_id, "Edit", args, f"The file {path} has been updated successfully.")

    def bash(self, call_id: str, command: str, output: str, *, exit_code: int = 0) -> Log:
        if exit_code:
            out = f"Exit code {exit_code}\n{output}"
            return self.call(call_id, "Bash", {"command": command}, out, error=True)
        raw = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        return self.call(call_id, "Bash", {"command": command}, output, raw=raw)

    # -- the files ---------------------------------------------------------------------------

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path

    def stream_json(self, *, foreign: dict[int, list[str]] | None = None) -> str:
        """The session as stream-json stdout; ``foreign`` lines (a crash's stack trace, say) are
        printed after the event of that index (0 is the ``init`` event)."""
        tools = sorted(
            {
                part["name"]
                for line in self.lines
                if line["type"] == "assistant"
                for part in line["message"]["content"]
                if part["type"] == "tool_use"
            }
        )
        init = {
            "type": "system",
            "subtype": "init",
            "session_id": self.session_id,
            "model": MODEL,
            "cwd": self.cwd,
            "tools": tools,
        }
        events = [init]
        for line in self.lines:
            event = {
                "type": line["type"],
                "session_id": self.session_id,
                "message": line["message"],
            }
            if line["type"] == "user" and isinstance(line["message"]["content"], list):
                event["tool_use_result"] = line.get("toolUseResult")
            events.append(event)
        events.append({"type": "result", "subtype": "success", "session_id": self.session_id})
        out: list[str] = []
        for n, event in enumerate(events):
            out.append(json.dumps(event))
            out.extend((foreign or {}).get(n, []))
        return "\n".join(out) + "\n"
