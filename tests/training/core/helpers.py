"""Small trajectories for the harness tests, written the way each agent's converter writes them.

``Session`` wraps the replay's ``AtifBuilder`` with the handful of moves the behaviours care
about (read, write, edit, run a command that passes or fails, say something at the end) in
Claude Code's shape by default, or Codex's or pi's, and turns the result into facts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.core.facts import TaskContext, TrajectoryFacts, facts_of
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay.synthetic import AtifBuilder

ROOT = "/repo"


class Session:
    def __init__(self, agent: str = "claude-code", root: str = ROOT) -> None:
        self.agent = agent
        self.root = root
        self.builder = AtifBuilder(agent, root=root)
        self.blobs = MemoryBlobs()
        self.closing = ""

    def _abs(self, path: str) -> str:
        return path if path.startswith(("/", "~")) else f"{self.root}/{path}"

    def read(self, path: str, text: str = "x = 1\n", *, error: bool = False) -> Session:
        if self.agent == "codex":
            return self.run(f"cat {path}", output=text, exit_code=1 if error else 0)
        if self.agent == "pi":
            self.builder.call("read", {"path": self._abs(path)}, text, error=error)
            return self
        numbered = "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(text.split("\n"), 1))
        result = "<tool_use_error>File does not exist.</tool_use_error>" if error else numbered
        self.builder.call("Read", {"file_path": self._abs(path)}, result, error=error or None)
        return self

    def write(self, path: str, content: str = "x = 2\n") -> Session:
        if self.agent == "codex":
            lines = "".join(f"+{line}\n" for line in content.splitlines())
            return self.patch(f"*** Add File: {path}\n{lines}")
        name = "write" if self.agent == "pi" else "Write"
        key = "path" if self.agent == "pi" else "file_path"
        self.builder.call(name, {key: self._abs(path), "content": content}, "ok", error=False)
        return self

    def edit(self, path: str, old: str = "x = 1", new: str = "x = 2") -> Session:
        if self.agent == "codex":
            return self.patch(f"*** Update File: {path}\n@@\n-{old}\n+{new}\n")
        if self.agent == "pi":
            args = {"path": self._abs(path), "oldText": old, "newText": new}
            self.builder.call("edit", args, "ok", error=False)
            return self
        args = {"file_path": self._abs(path), "old_string": old, "new_string": new}
        self.builder.call("Edit", args, "The file has been updated.")
        return self

    def patch(self, body: str) -> Session:
        output = '{"output":"Success.","metadata":{"exit_code":0}}'
        self.builder.call(
            "apply_patch", {"input": f"*** Begin Patch\n{body}*** End Patch\n"}, output
        )
        return self

    def run(self, command: str, output: str = "", exit_code: int = 0) -> Session:
        if self.agent == "codex":
            text = f"Process exited with code {exit_code}\nOutput:\n{output}"
            self.builder.call("exec_command", {"cmd": command, "workdir": self.root}, text)
        elif self.agent == "pi":
            text = output + (f"\n\nCommand exited with code {exit_code}" if exit_code else "")
            self.builder.call("bash", {"command": command}, text, error=exit_code != 0)
        elif exit_code:
            self.builder.call(
                "Bash", {"command": command}, f"Exit code {exit_code}\n{output}", error=True
            )
        else:
            self.builder.call("Bash", {"command": command}, output)
        return self

    def tool(self, name: str, arguments: dict[str, Any], result: str = "ok") -> Session:
        self.builder.call(name, arguments, result)
        return self

    def say(self, text: str) -> Session:
        self.closing = text
        return self

    def facts(
        self, *, verified_reward: float | None = None, context: TaskContext | None = None
    ) -> TrajectoryFacts:
        atif, side = self.builder.build()
        if self.closing:
            atif["steps"].append(
                {"step_id": len(atif["steps"]) + 1, "source": "agent", "message": self.closing}
            )
        return facts_of(
            atif,
            side,
            root=self.root,
            blobs=self.blobs,
            verified_reward=verified_reward,
            context=context,
        )


def corpus_facts(corpus: Path, relative: str, **kwargs: Any) -> TrajectoryFacts:
    """The facts of one real trajectory in ../shared/corpus."""
    from trajectories.core import formats

    loaded = formats.load(corpus / relative)
    assert isinstance(loaded, formats.Loaded), loaded
    return facts_of(
        loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=MemoryBlobs(), **kwargs
    )
