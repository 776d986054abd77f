"""A replay script: a recorded session's own tool calls, laid out for one kept task.

``replay_plan.plan_replay`` writes one from the session's replay; the replay agent
(``replay_agent.ReplayAgent``) re-issues it inside the task's environment. Nothing in it needs
the database: the task it belongs to is named by the instruction Harbor gives the agent.

    >>> script = ReplayScript(
    ...     task="traj2env/repair-1", key="k", instruction="Make the test pass.",
    ...     project_dir="/app", recorded_root="/home/u/p", source_sha256="0f" * 32,
    ...     fix_at=1, actions=(Action(ActionKind.BASH, command="pytest", cwd="/app"),
    ...                        Action(ActionKind.WRITE, path="/app/calc.py", data=b"x = 1\\n")))
    >>> [a.kind.value for a in script.actions_for(Cut.BEFORE_FIX)]
    ['bash']
    >>> read_script_text(script.to_json()) == script
    True
    >>> script.matches("Make the  test pass.\\n\\nAlso: be brief.")
    True

The calls are those of the recorded attempt at the task: from the failing check the task starts
at to the passing check it ends at. ``fix_at`` is where the session began its fix (the first
call that changed a file the fix changes): the actions before it are a real failing attempt.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

FORMAT = "traj2env-replay-script/1"
_SPACE = re.compile(r"\s+")


class ScriptError(ValueError):
    """A replay script that cannot serve: unreadable, for another task, or without a fix."""


class Cut(StrEnum):
    WHOLE = "whole"  # every recorded call of the attempt, the fix and the passing check too
    BEFORE_FIX = "before_fix"  # the attempt up to the call that began the fix


class ActionKind(StrEnum):
    BASH = "bash"  # a recorded shell command, run again
    READ = "read"  # a recorded read of a file
    WRITE = "write"  # a file as the recorded call left it (Write, Edit, a patch ...)
    DELETE = "delete"
    EDIT = "edit"  # a recorded edit whose result the replay did not know: applied as it was


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    path: str = ""  # absolute, inside the task's project (read, write, delete, edit)
    command: str = ""  # bash: the recorded command, the recorded root replaced
    cwd: str = ""  # bash: where it ran, inside the task's project
    data: bytes = b""  # write: the content
    old: str = ""  # edit
    new: str = ""
    replace_all: bool = False
    event: int = -1  # the replay event it re-issues
    tool: str = ""  # the recorded tool's name

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "kind" or value == f.default:
                continue
            out[f.name] = base64.b64encode(value).decode("ascii") if f.name == "data" else value
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Action:
        values = {f.name: raw[f.name] for f in fields(cls) if f.name in raw}
        values["kind"] = ActionKind(raw["kind"])
        if "data" in values:
            values["data"] = base64.b64decode(values["data"], validate=True)
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A recorded call the script does not re-issue, and why (a search tool, a lost write)."""

    event: int
    tool: str
    reason: str


@dataclass(frozen=True, slots=True)
class ReplayScript:
    task: str  # the task's name, as task.toml gives it
    key: str  # the candidate's content key
    instruction: str  # what Harbor gives the agent for this task
    project_dir: str
    recorded_root: str
    source_sha256: str  # the recorded session's file (task.toml's source_trace)
    fix_at: int  # actions[:fix_at] is the attempt cut before its fix
    actions: tuple[Action, ...]
    skipped: tuple[Skipped, ...] = ()
    steps: tuple[Any, ...] = field(default=())  # the failing and passing checks' step ids

    def actions_for(self, cut: Cut | str) -> tuple[Action, ...]:
        return self.actions if Cut(cut) is Cut.WHOLE else self.actions[: self.fix_at]

    def matches(self, instruction: str) -> bool:
        """Whether Harbor's instruction is this task's (Harbor may append extra instructions)."""
        mine = _normal(self.instruction)
        return bool(mine) and _normal(instruction).startswith(mine)

    def to_json(self) -> str:
        document = {
            "format": FORMAT,
            "task": self.task,
            "key": self.key,
            "instruction": self.instruction,
            "project_dir": self.project_dir,
            "recorded_root": self.recorded_root,
            "source_sha256": self.source_sha256,
            "steps": list(self.steps),
            "fix_at": self.fix_at,
            "actions": [a.to_dict() for a in self.actions],
            "skipped": [asdict(s) for s in self.skipped],
        }
        return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def read_script_text(text: str) -> ReplayScript:
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise ScriptError(f"not a replay script (its format is not {FORMAT})")
        actions = tuple(Action.from_dict(a) for a in raw["actions"])
        script = ReplayScript(
            task=str(raw["task"]),
            key=str(raw["key"]),
            instruction=str(raw["instruction"]),
            project_dir=str(raw["project_dir"]),
            recorded_root=str(raw["recorded_root"]),
            source_sha256=str(raw["source_sha256"]),
            fix_at=int(raw["fix_at"]),
            actions=actions,
            skipped=tuple(Skipped(**s) for s in raw.get("skipped", ())),
            steps=tuple(raw.get("steps", ())),
        )
    except ScriptError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise ScriptError(f"the replay script is damaged: {exc}") from None
    if not 0 <= script.fix_at <= len(actions):
        raise ScriptError(f"the replay script cuts at call {script.fix_at} of {len(actions)}")
    return script


def choose_script(path: Path, instruction: str) -> ReplayScript:
    """The script at ``path`` (a file, or a folder of ``*.json`` scripts) written for the task
    whose instruction Harbor gave: a script never runs against another task."""
    if path.is_dir():
        files = sorted(path.glob("*.json"))
    elif path.is_file():
        files = [path]
    else:
        raise ScriptError(f"{path} is neither a replay script nor a folder of them")
    found: list[ReplayScript] = []
    for file in files:
        try:
            script = read_script_text(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ScriptError) as exc:
            if not path.is_dir():
                raise ScriptError(f"{file}: {exc}") from None
            continue  # a folder may hold other JSON files
        if script.matches(instruction):
            found.append(script)
    if len(found) == 1:
        return found[0]
    if not found:
        raise ScriptError(
            f"no replay script at {path} was written for this task (the task's instruction "
            "is not the script's): write one with `manage.py replay_script TASK`"
        )
    names = ", ".join(sorted(s.task for s in found))
    raise ScriptError(f"{len(found)} replay scripts at {path} match this task ({names}): keep one")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()
