"""Planning a replay: which of a recorded session's calls to re-issue in a kept task, and where
its fix begins.

    result = replay(atif, side_data, root=cwd, blobs=blobs)        # the session's replay
    task = read_kept_task(task_dir)                                # what task.toml records
    script = plan_replay(result, atif, attempt=Attempt.of(candidate), task=task, blobs=blobs)
    script.actions_for(Cut.BEFORE_FIX)

Each replay event from the failing check to the passing check becomes actions, in order:

* a shell command is run again (``bash``), its recorded root rewritten to the task's project
  and in the folder it ran in;
* a read is read again (``read``);
* a file a call wrote (Write, Edit, MultiEdit, a patch, whatever the agent's tool) is written
  with the content the replay knows it left (``write``), or deleted (``delete``); an edit whose
  result the replay did not know is applied as recorded (``edit``);
* anything else (a search tool, a todo list, a poll of an earlier command, a write the replay
  lost) is listed in ``skipped`` with the reason.

The fix begins at the first call after the failing check that changed a file the repair changes
(its added, modified and deleted files); when none names one (a script rewrote them unseen),
at the first call that changed anything.
"""

from __future__ import annotations

import tomllib
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tasks_review.core.instruction import rewrite_root
from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ChangeKind, Event, ReplayResult, is_tree
from trajectories.core.replay.calls import collect_calls
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.tools import EditOp, Op, PollOp, ReadOp, classify

from .replay_script import Action, ActionKind, ReplayScript, ScriptError, Skipped


class RepairShaped(Protocol):
    """What a mined candidate says about its attempt (``RepairCandidate`` has all of it)."""

    fail_command_index: int
    pass_command_index: int
    project_dir: str
    key: str

    @property
    def changed(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class Attempt:
    """The recorded attempt at a task: its two checks (indices into the replay's commands),
    the files its fix changes (relative to the recorded root) and where the task puts them."""

    fail_command: int
    pass_command: int
    changed: Collection[str]
    project_dir: str
    key: str

    @classmethod
    def of(cls, candidate: RepairShaped) -> Attempt:
        return cls(
            fail_command=candidate.fail_command_index,
            pass_command=candidate.pass_command_index,
            changed=frozenset(candidate.changed),
            project_dir=candidate.project_dir,
            key=candidate.key,
        )


@dataclass(frozen=True, slots=True)
class KeptTask:
    """What a kept task's folder says about itself and the session it was mined from."""

    name: str
    instruction: str  # as Harbor gives it to an agent
    source_sha256: str  # task.toml's [metadata.repo2env] source_trace: the session's file
    key: str  # the candidate's content key


def read_kept_task(task_dir: Path) -> KeptTask:
    """The task at ``task_dir``; ScriptError when it records no session it came from."""
    from harbor.models.task.task import Task  # Harbor's own reading of instruction.md

    try:
        config = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            instruction = Task(task_dir).instruction
    except Exception as exc:  # Harbor raises pydantic, TOML and OS errors alike
        raise ScriptError(f"{task_dir} is not a task folder Harbor can run: {exc}") from None
    origin = (config.get("metadata") or {}).get("repo2env") or {}
    trace = origin.get("source_trace") or {}
    if not isinstance(trace, dict) or not isinstance(trace.get("sha256"), str):
        raise ScriptError(
            f"{task_dir}/task.toml records no session it was mined from "
            "([metadata.repo2env] source_trace): there are no recorded calls to replay"
        )
    return KeptTask(
        name=str((config.get("task") or {}).get("name") or task_dir.name),
        instruction=instruction,
        source_sha256=trace["sha256"],
        key=str(origin.get("candidate_key") or ""),
    )


def plan_replay(
    result: ReplayResult,
    atif: Mapping[str, Any],
    *,
    attempt: Attempt,
    task: KeptTask,
    blobs: BlobStore,
) -> ReplayScript:
    """The replay script of ``attempt``; ScriptError when the replay does not hold it."""
    if task.key and task.key != attempt.key:
        raise ScriptError(
            f"{task.name} was written for candidate {task.key[:12]}, not this one "
            f"({attempt.key[:12]}): the session's attempt is another task's"
        )
    commands = result.commands
    if not 0 <= attempt.fail_command < attempt.pass_command < len(commands):
        raise ScriptError(
            f"the session's replay has {len(commands)} commands: checks "
            f"{attempt.fail_command} and {attempt.pass_command} are not a failing and a later "
            "passing one of it (was it replayed again since the task was mined?)"
        )
    failing, passing = commands[attempt.fail_command], commands[attempt.pass_command]
    planner = _Planner(result, attempt, blobs, _ops(atif, result.agent))
    fix_at = first_change = None
    for event in result.events[failing.event_index : passing.event_index + 1]:
        after_failure = event.index > failing.event_index
        if after_failure and fix_at is None and _changes(event, attempt.changed):
            fix_at = len(planner.actions)
        if after_failure and first_change is None and _changes(event, None):
            first_change = len(planner.actions)
        planner.add(event)
    cut = fix_at if fix_at is not None else first_change
    if cut is None:
        raise ScriptError(
            "no call between the failing and the passing check changed a file: the recorded "
            "attempt has no fix to cut before"
        )
    return ReplayScript(
        task=task.name,
        key=attempt.key,
        instruction=task.instruction,
        project_dir=attempt.project_dir,
        recorded_root=result.root,
        source_sha256=task.source_sha256,
        fix_at=cut,
        actions=tuple(planner.actions),
        skipped=tuple(planner.skipped),
        steps=(failing.step_id, passing.step_id),
    )


def _ops(atif: Mapping[str, Any], agent: str | None) -> dict[str, Op]:
    """Each call's operation, by its id, read as the replay reads it."""
    steps = [s for s in (atif.get("steps") or []) if isinstance(s, Mapping)]
    return {
        call.tool_call_id: classify(call.name, call.args, agent)
        for call in collect_calls(steps, {})
    }


def _changes(event: Event, paths: Collection[str] | None) -> bool:
    """Whether ``event`` changed one of ``paths`` (None: any file, or a folder it may have)."""
    for key, change in event.changes.items():
        if change.observed or change.flagged:
            continue
        if paths is None or (not is_tree(key) and key in paths):
            return True
    return False


class _Planner:
    def __init__(
        self, result: ReplayResult, attempt: Attempt, blobs: BlobStore, ops: Mapping[str, Op]
    ) -> None:
        self.result = result
        self.project = attempt.project_dir.rstrip("/") or "/"
        self.paths = Paths(result.root)
        self.blobs = blobs
        self.ops = ops
        self.actions: list[Action] = []
        self.skipped: list[Skipped] = []

    def in_task(self, key: str) -> str:
        return self.project if key in ("", ".") else f"{self.project}/{key}"

    def add_action(self, event: Event, kind: ActionKind, **what: Any) -> None:
        self.actions.append(Action(kind, event=event.index, tool=event.tool, **what))

    def skip(self, event: Event, reason: str) -> None:
        self.skipped.append(Skipped(event.index, event.tool, reason))

    def add(self, event: Event) -> None:
        if event.command_index is not None:
            command = self.result.commands[event.command_index]
            text = rewrite_root(command.command, self.result.root, self.project)
            where = self.in_task(command.cwd) if command.cwd is not None else self.project
            self.add_action(event, ActionKind.BASH, command=text, cwd=where)
            return
        op = self.ops.get(event.tool_call_id)
        if isinstance(op, ReadOp):
            resolved = self.paths.resolve(op.path, self.result.root)
            if resolved.flagged:
                self.skip(event, f"it read {op.path}, outside the project")
            else:
                self.add_action(event, ActionKind.READ, path=self.in_task(resolved.key))
            return
        written = sorted(
            (key, change)
            for key, change in event.changes.items()
            if not change.observed and not change.flagged and not is_tree(key)
        )
        if not written:
            why = "it polls an earlier command" if isinstance(op, PollOp) else "it changed no file"
            self.skip(event, why)
            return
        for key, change in written:
            self.add_change(event, key, change.kind, change.sha, op, change.reason)

    def add_change(
        self,
        event: Event,
        key: str,
        kind: ChangeKind,
        sha: str | None,
        op: Op | None,
        reason: str,
    ) -> None:
        path = self.in_task(key)
        if kind is ChangeKind.DELETED:
            self.add_action(event, ActionKind.DELETE, path=path)
        elif kind is ChangeKind.WRITTEN and sha is not None and self.blobs.has(sha):
            self.add_action(event, ActionKind.WRITE, path=path, data=self.blobs.get(sha))
        elif isinstance(op, EditOp) and self.paths.resolve(op.path, self.result.root).key == key:
            for edit in op.edits:
                self.add_action(
                    event,
                    ActionKind.EDIT,
                    path=path,
                    old=edit.old,
                    new=edit.new,
                    replace_all=edit.replace_all,
                )
        else:
            self.skip(event, f"what it left in {key} is unknown ({reason or kind.value})")
