"""Building the facts of a trajectory from its ATIF and the replay of that same ATIF.

    result = replay(atif, side_data, root=root, blobs=blobs)
    facts = build_facts(atif, side_data, result, verified_reward=1.0,
                        context=TaskContext(test_files=("tests/test_app.py",)))

Every tool call becomes one ``Action`` (a Codex code-mode ``exec`` that ran several commands
becomes one per command); the tool is read by the replay's own ``classify`` and the calls are
walked by its own ``collect_calls``, so the two can never disagree. What a call did comes from
the replay's event, not from what the agent said it did (see the package docstring).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ChangeKind, ReplayResult, ShellCommand, replay
from trajectories.core.replay.calls import collect_calls
from trajectories.core.replay.model import CheckKind, Event, is_tree, tree_dir
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.results import CallOutcome, content_text, tool_status
from trajectories.core.replay.tools import (
    ChangeListOp,
    CodexPatchOp,
    DeleteOp,
    EditOp,
    InsertOp,
    LostOp,
    Op,
    ReadOp,
    ShellOp,
    WriteOp,
    classify,
)

from ..spec import ActionKind
from .bash import read_line
from .executed import tests_executed
from .model import Action, CheckFact, FinalFile, TaskContext, TrajectoryFacts
from .shell import is_focused, shell_reads

# The claim of success sits in the closing lines; the whole of a long final message is not
# worth storing for 10,000 trajectories.
FINAL_MESSAGE_CHARS = 4000
# Action.ok of a call that is not a shell command; unknown and missing results leave it None.
_CALL_OK = {CallOutcome.OK: True, CallOutcome.FAILED: False, CallOutcome.NOT_RUN: False}


def facts_of(
    atif: Mapping[str, Any],
    side_data: Mapping[str, Any] | None,
    *,
    root: str | None,
    blobs: BlobStore,
    verified_reward: float | None = None,
    context: TaskContext | None = None,
) -> TrajectoryFacts:
    """Replay ``atif`` and build its facts in one call."""
    result = replay(atif, side_data, root=root, blobs=blobs)
    return build_facts(atif, side_data, result, verified_reward=verified_reward, context=context)


def build_facts(
    atif: Mapping[str, Any],
    side_data: Mapping[str, Any] | None,
    result: ReplayResult,
    *,
    verified_reward: float | None = None,
    context: TaskContext | None = None,
) -> TrajectoryFacts:
    """The facts of a trajectory from its ATIF and the replay of that same ATIF."""
    side = side_data or {}
    steps = [s for s in (atif.get("steps") or []) if isinstance(s, Mapping)]
    tool_results = side.get("tool_results")
    calls = collect_calls(steps, tool_results if isinstance(tool_results, Mapping) else {})
    if len(calls) != len(result.events):
        raise ValueError(
            f"the replay has {len(result.events)} events for {len(calls)} tool calls: "
            "it was not made from this ATIF"
        )
    side_cwd = side.get("cwd") if isinstance(side.get("cwd"), Mapping) else {}
    paths = Paths(result.root)
    commands: dict[int, list[ShellCommand]] = {}
    for command in result.commands:
        commands.setdefault(command.event_index, []).append(command)
    present: set[str] = set()
    actions: list[Action] = []
    for call, event in zip(calls, result.events, strict=True):
        op = classify(call.name, call.args, result.agent)
        writes, edits, deletes = _changes(event, present)
        recorded_cwd = side_cwd.get(call.tool_call_id) if isinstance(side_cwd, Mapping) else None
        cwd = recorded_cwd if isinstance(recorded_cwd, str) else result.root
        ran = commands.get(event.index, [])
        if ran:
            for i, command in enumerate(ran):
                first = i == 0
                actions.append(
                    _shell_action(
                        command,
                        event,
                        call.name,
                        paths,
                        (writes, edits, deletes) if first else ((), (), ()),
                    )
                )
            continue
        outcome = tool_status(call.result, patch=isinstance(op, CodexPatchOp | ChangeListOp))
        ok = _CALL_OK.get(outcome)
        named = tuple(paths.resolve(p, cwd).key for p in _op_paths(op))
        kind = _kind(op)
        actions.append(
            Action(
                kind=kind,
                step=event.step_index,
                event=event.index,
                tool=call.name,
                paths=named,
                reads=named if kind is ActionKind.READ and ok is not False else (),
                writes=writes,
                edits=edits,
                deletes=deletes,
                ok=ok,
            )
        )
    final_files = {
        key: FinalFile(entry.status, entry.sha)
        for key, entry in result.final_state.items()
        if not is_tree(key)
    }
    deleted = frozenset(
        key
        for event in result.events
        for key, change in event.changes.items()
        if change.kind is ChangeKind.DELETED and not is_tree(key) and key not in final_files
    )
    return TrajectoryFacts(
        root=result.root,
        agent=result.agent,
        n_steps=result.n_steps,
        actions=tuple(actions),
        final_files=final_files,
        deleted=deleted,
        uncertain=tuple(sorted(tree_dir(k) for k in result.final_state if is_tree(k))),
        final_message=final_message(steps),
        verified_reward=verified_reward,
        context=context or TaskContext(),
    )


def final_message(steps: Sequence[Mapping[str, Any]]) -> str:
    """The agent's last words: the text of the last agent step that has any."""
    for step in reversed(steps):
        if step.get("source") != "agent":
            continue
        text = content_text(step.get("message")).strip()
        if text:
            return text[-FINAL_MESSAGE_CHARS:]
    return ""


# -- one call ------------------------------------------------------------------------------------


def _kind(op: Op) -> ActionKind:
    if isinstance(op, ShellOp):
        return ActionKind.SHELL
    if isinstance(op, ReadOp):
        return ActionKind.READ
    if isinstance(op, WriteOp):
        return ActionKind.WRITE
    if isinstance(op, EditOp | InsertOp | CodexPatchOp | ChangeListOp | DeleteOp):
        return ActionKind.EDIT
    if isinstance(op, LostOp) and op.path is not None:
        return ActionKind.EDIT  # a notebook edit, an undo: it changed a named file
    return ActionKind.OTHER


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def _op_paths(op: Op) -> list[str]:
    if isinstance(op, ReadOp | WriteOp | EditOp | InsertOp | DeleteOp):
        return [op.path]
    if isinstance(op, LostOp):
        return [op.path] if op.path is not None else []
    if isinstance(op, CodexPatchOp):
        return [(a or b).strip() for a, b in _PATCH_FILE.findall(op.text)]
    if isinstance(op, ChangeListOp):
        return [path for path, _ in op.changes]
    return []


Changed = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _changes(event: Event, present: set[str]) -> Changed:
    """(writes, edits, deletes) of an event, keeping ``present`` (files known to exist) current."""
    writes: list[str] = []
    edits: list[str] = []
    deletes: list[str] = []
    for key, change in event.changes.items():
        if is_tree(key):
            if change.kind is ChangeKind.DELETED:
                inside = tree_dir(key)
                present.difference_update(
                    [p for p in present if inside == "" or p.startswith(inside + "/")]
                )
            continue
        if change.observed:
            present.add(key)
            continue
        existed = key in present
        if change.kind is ChangeKind.DELETED:
            present.discard(key)
            deletes.append(key)
        elif change.kind is ChangeKind.WRITTEN and not existed:
            present.add(key)
            writes.append(key)
        else:  # an overwrite, or a change the replay could not follow: the file was touched
            present.add(key)
            edits.append(key)
    return tuple(writes), tuple(edits), tuple(deletes)


def _shell_action(
    command: ShellCommand,
    event: Event,
    tool: str,
    paths: Paths,
    changed: Changed,
) -> Action:
    writes, edits, deletes = changed
    line = read_line(command.command)
    pipelines = line.pipelines
    failed = command.exit_code is not None and command.exit_code != 0
    reads = () if failed else shell_reads(pipelines, command.cwd_abs, paths)
    check = None
    if command.check is not None:
        check = CheckFact(
            kind=command.check.kind,
            runner=command.check.runner,
            masked=command.check.masked,
            focused=is_focused(command.check.segment),
            ran=tests_executed(command.output) if command.check.kind is CheckKind.TEST else None,
        )
    return Action(
        kind=ActionKind.SHELL,
        step=command.step_index,
        event=event.index,
        tool=tool,
        reads=reads,
        writes=writes,
        edits=edits,
        deletes=deletes,
        ok=None if command.exit_code is None else command.exit_code == 0,
        command=command.command,
        pipelines=pipelines,
        cwd=command.cwd_abs,
        exit_code=command.exit_code,
        check=check,
        parsed=line.parsed,
    )
