"""Synthetic Claude-Code-style trajectories of any length, with their ground truth.

``claude_code_session(n)`` returns ATIF (as atif-make writes it for Claude Code) plus side data
(``toolUseResult``/``cwd`` per call, as ingest keeps them) for ``n`` steps of a plausible
session: files written, edited and read (in full and in part), read-only shell commands, and
test runs that fail, get fixed by an edit and pass. It also returns what a correct replay must
find: the final file contents and every check with its exit code. Tests use it for exact
end-state assertions; the benchmark uses it at 20,000 steps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Synthetic:
    atif: dict[str, Any]
    side_data: dict[str, Any]
    root: str
    files: dict[str, str]  # final contents, root-relative path → text
    checks: list[tuple[int, int]] = field(default_factory=list)  # (step index, exit code)


class _Session:
    def __init__(self, root: str, seed: int) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.steps: list[dict[str, Any]] = []
        self.tool_results: dict[str, Any] = {}
        self.cwd: dict[str, str] = {}
        self.files: dict[str, list[str]] = {}
        self.counter = 0
        self.checks: list[tuple[int, int]] = []
        self.broken: str | None = None  # a module whose test currently fails

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter} = {self.rng.randint(0, 10**6)}"

    def user(self, text: str) -> None:
        self.steps.append({"step_id": len(self.steps) + 1, "source": "user", "message": text})

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        content: str,
        side: Any,
        *,
        error: bool = False,
    ) -> None:
        call_id = f"toolu_{len(self.steps):06d}"
        result: dict[str, Any] = {"source_call_id": call_id, "content": content}
        if error:
            result["extra"] = {"is_error": True}
        self.steps.append(
            {
                "step_id": len(self.steps) + 1,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
                ],
                "observation": {"results": [result]},
            }
        )
        self.tool_results[call_id] = side
        self.cwd[call_id] = self.root

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def text(self, rel: str) -> str:
        return "".join(line + "\n" for line in self.files[rel])

    # -- operations ----------------------------------------------------------------------------

    def write(self) -> None:
        rel = f"src/mod_{len(self.files)}.py"
        lines = [self.fresh("value") for _ in range(self.rng.randint(5, 25))]
        self.files[rel] = lines
        content = self.text(rel)
        self.call(
            "Write",
            {"file_path": self.path(rel), "content": content},
            f"File created successfully at: {self.path(rel)}",
            {
                "type": "create",
                "filePath": self.path(rel),
                "content": content,
                "structuredPatch": [],
                "originalFile": None,
            },
        )

    def edit(self, rel: str | None = None) -> None:
        rel = rel or self.rng.choice(sorted(self.files))
        original = self.text(rel)
        lines = self.files[rel]
        at = self.rng.randrange(len(lines))
        old, new = lines[at], self.fresh("edited")
        lines[at] = new
        self.call(
            "Edit",
            {
                "file_path": self.path(rel),
                "old_string": old,
                "new_string": new,
                "replace_all": False,
            },
            f"The file {self.path(rel)} has been updated successfully.",
            {
                "filePath": self.path(rel),
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": [
                    {
                        "oldStart": at + 1,
                        "oldLines": 1,
                        "newStart": at + 1,
                        "newLines": 1,
                        "lines": [f"-{old}", f"+{new}"],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            },
        )

    def read(self, *, partial: bool) -> None:
        rel = self.rng.choice(sorted(self.files))
        lines = [*self.files[rel], ""]  # the text ends with a newline: Read shows an empty line
        start, count = 1, len(lines)
        args: dict[str, Any] = {"file_path": self.path(rel)}
        if partial:
            start = self.rng.randint(1, max(1, len(lines) - 2))
            count = min(3, len(lines) - start + 1)
            args |= {"offset": start, "limit": count}
        shown = lines[start - 1 : start - 1 + count]
        listing = "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(shown))
        self.call(
            "Read",
            args,
            listing,
            {
                "type": "text",
                "file": {
                    "filePath": self.path(rel),
                    "content": "\n".join(shown),
                    "numLines": len(shown),
                    "startLine": start,
                    "totalLines": len(lines),
                },
            },
        )

    def look(self) -> None:
        command = self.rng.choice(["ls -la src", "git status --short", "grep -rn value_ src"])
        self.call(
            "Bash",
            {"command": command},
            "ok",
            {"stdout": "ok", "stderr": "", "interrupted": False, "isImage": False},
        )

    def test(self, rel: str, *, passing: bool) -> None:
        module = rel.rsplit("/", 1)[-1].removesuffix(".py")
        command = f"cd {self.root} && python -m pytest tests/test_{module}.py -q"
        if passing:
            output = "1 passed in 0.01s"
            self.call(
                "Bash",
                {"command": command},
                output,
                {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
            )
        else:
            output = f"F\nFAILED tests/test_{module}.py::test_value - AssertionError\n1 failed"
            self.call(
                "Bash",
                {"command": command},
                f"Exit code 1\n{output}",
                f"Error: Exit code 1\n{output}",
                error=True,
            )
        self.checks.append((len(self.steps) - 1, 0 if passing else 1))


def claude_code_session(
    n_steps: int, *, seed: int = 0, root: str = "/work/project", max_files: int = 40
) -> Synthetic:
    """An ``n_steps``-step session (user prompts included) and its ground truth."""
    s = _Session(root, seed)
    s.user("Build the modules and keep the tests green.")
    while len(s.steps) < n_steps:
        remaining = n_steps - len(s.steps)
        if s.broken is not None and remaining >= 2:
            # Fix what the failing test showed, then rerun it.
            s.edit(s.broken)
            s.test(s.broken, passing=True)
            s.broken = None
            continue
        roll = s.rng.random()
        if not s.files or (roll < 0.08 and len(s.files) < max_files):
            s.write()
        elif roll < 0.40:
            s.edit()
        elif roll < 0.55:
            s.read(partial=False)
        elif roll < 0.65:
            s.read(partial=True)
        elif roll < 0.78:
            s.look()
        elif roll < 0.90 and remaining >= 3:
            s.broken = s.rng.choice(sorted(s.files))
            s.test(s.broken, passing=False)
        elif roll < 0.95:
            s.test(s.rng.choice(sorted(s.files)), passing=True)
        else:
            s.user("Keep going.")
    atif = {
        "schema_version": "ATIF-v1.7",
        "session_id": f"synthetic-{seed}-{n_steps}",
        "agent": {
            "name": "claude-code",
            "version": "synthetic",
            "model_name": "synthetic",
            "extra": {"cwd": root},
        },
        "steps": s.steps[:n_steps],
    }
    return Synthetic(
        atif=atif,
        side_data={"tool_results": s.tool_results, "cwd": s.cwd},
        root=root,
        files={rel: s.text(rel) for rel in s.files},
        checks=s.checks,
    )


class AtifBuilder:
    """Hand-written ATIF in the shape each agent's converter produces, for exact tests.

    ``call`` adds one agent step with one tool call and its result; ``calls`` puts several on
    one step. ``error`` is written the way the agent flags failures (Claude Code ``is_error``,
    pi ``isError``); ``side`` and ``cwd`` become side data for the call.
    """

    def __init__(self, agent: str = "claude-code", *, root: str | None = "/repo") -> None:
        self.agent = agent
        self.root = root
        self.steps: list[dict[str, Any]] = []
        self.tool_results: dict[str, Any] = {}
        self.cwd: dict[str, str] = {}
        self.extra_side: dict[str, Any] = {}

    def user(self, text: str = "Please continue.") -> AtifBuilder:
        self.steps.append({"step_id": len(self.steps) + 1, "source": "user", "message": text})
        return self

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        result: str | None = "",
        *,
        error: bool | None = None,
        extra: dict[str, Any] | None = None,
        side: Any = None,
        cwd: str | None = None,
        call_id: str | None = None,
    ) -> str:
        """Add a step with one call; returns its tool_call_id. ``result=None``: no result."""
        call_id = call_id or f"call_{len(self.steps)}"
        step: dict[str, Any] = {
            "step_id": len(self.steps) + 1,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
            ],
        }
        if result is not None:
            observed: dict[str, Any] = {"source_call_id": call_id, "content": result}
            flags = dict(extra or {})
            if error is not None:
                flags[self.error_key] = error
            if flags:
                observed["extra"] = flags
            step["observation"] = {"results": [observed]}
        self.steps.append(step)
        if side is not None:
            self.tool_results[call_id] = side
        if cwd is not None:
            self.cwd[call_id] = cwd
        return call_id

    @property
    def error_key(self) -> str:
        return "isError" if self.agent in ("pi", "openclaw") else "is_error"

    def build(self) -> tuple[dict[str, Any], dict[str, Any]]:
        agent: dict[str, Any] = {"name": self.agent, "version": "test"}
        if self.root is not None:
            agent["extra"] = {"cwd": self.root}
        atif: dict[str, Any] = {"schema_version": "ATIF-v1.7", "session_id": "test"}
        atif |= {"agent": agent, "steps": self.steps}
        side: dict[str, Any] = {"tool_results": self.tool_results, "cwd": self.cwd}
        return atif, {**side, **self.extra_side}
