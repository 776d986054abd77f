"""The trajectory a task's own runs leave in Harbor's ``/logs/agent``: ATIF in Claude Code's shape.

Three writers share it: a mined task's ``solve.sh`` (the oracle), an authored task's wrapped
``solve.sh``, and the replay agent (``training.core.harbor.replay_agent``). The steps are
Claude-Code-shaped (Read with numbered lines, Edit, Write, Bash) because the replay reads those
exactly; exit statuses go in each result's ``extra``.

    >>> record = Recorder("Fix the check.", call_prefix="oracle")
    >>> record.bash("python3 -m unittest", "OK", 0)
    >>> record.say("Done.")
    >>> document = record.document(session_id="s-1", agent="oracle", version="traj2env", cwd="/app")
    >>> [s["source"] for s in document["steps"]], document["steps"][1]["tool_calls"][0]["arguments"]
    (['user', 'agent', 'agent'], {'command': 'python3 -m unittest'})

Scripts that run inside a task's image embed this module's source (``embedded_source``): only
the standard library, and nothing newer than Python 3.8 at run time (Debian's python3 of any
image the grader runs in), so annotations stay strings.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from typing import Any

SCHEMA = "ATIF-v1.7"
FALLBACK_INSTRUCTION = "Fix the check."


def numbered(content: str) -> str:
    """A file's text as Claude Code's Read shows it: six-wide line numbers, then an arrow."""
    return "\n".join(f"{i:6d}\u2192{line}" for i, line in enumerate(content.split("\n"), 1))


class Recorder:
    """The steps of one run: the instruction, then one step per tool call, then what was said."""

    def __init__(self, instruction: str, *, call_prefix: str) -> None:
        self.prefix = call_prefix
        message = instruction or FALLBACK_INSTRUCTION
        self.steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": message}]

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        content: str,
        extra: dict[str, Any] | None = None,
    ) -> None:
        n = len(self.steps) + 1
        call_id = f"{self.prefix}_{n}"
        result: dict[str, Any] = {"source_call_id": call_id, "content": content}
        if extra:
            result["extra"] = extra
        self.steps.append(
            {
                "step_id": n,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
                ],
                "observation": {"results": [result]},
            }
        )

    def read(self, path: str, content: str) -> None:
        self.call("Read", {"file_path": path}, numbered(content))

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> None:
        arguments: dict[str, Any] = {"file_path": path, "old_string": old, "new_string": new}
        if replace_all:
            arguments["replace_all"] = True
        self.call("Edit", arguments, f"The file {path} has been updated.")

    def write(self, path: str, content: str) -> None:
        self.call("Write", {"file_path": path, "content": content}, f"File created: {path}")

    def bash(self, command: str, output: str, status: int) -> None:
        self.call("Bash", {"command": command}, output, {"exit_code": status})

    def refused(self, name: str, arguments: dict[str, Any], why: str) -> None:
        """A call that did not run (an edit whose text was not found): Claude Code's error."""
        content = f"<tool_use_error>{why}</tool_use_error>"
        self.call(name, arguments, content, {"is_error": True})

    def say(self, message: str) -> None:
        self.steps.append({"step_id": len(self.steps) + 1, "source": "agent", "message": message})

    def document(self, *, session_id: str, agent: str, version: str, cwd: str) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA,
            "session_id": session_id,
            "agent": {"name": agent, "version": version, "extra": {"cwd": cwd}},
            "steps": self.steps,
        }

    def save(self, out: str, **document: str) -> None:
        """Write the document whole: a reader never sees half a file."""
        with open(out + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(self.document(**document), handle)
        os.replace(out + ".tmp", out)


def embedded_source() -> str:
    """This module's code, for a script that runs inside a task's image (a heredoc body)."""
    source = inspect.getsource(sys.modules[__name__])
    # The doctest and the embedding helper are the host's; the image runs the classes.
    start = source.index("from __future__")
    end = source.index("def embedded_source")
    return source[start:end].rstrip() + "\n"
