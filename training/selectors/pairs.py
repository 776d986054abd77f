"""A preference pair side by side, as one labeller sees it: their left and right rollouts'
steps aligned (``training.core.pairs.align``), the shared prefix apart, the divergence marked,
and each side's files from the task's start to what that rollout left behind.

Steps are shown the way the replay stepper shows them (``trajectories.stepper_models``: tool
calls with highlighted arguments and outputs), diffs the way the review desk does
(``tasks_review.selectors.desk.files_changes``). Nothing names the agent, model or adapter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from tasks_review.selectors.desk import files_changes
from training.core.pairs import align
from trajectories.display import Capped, DiffView, Fields
from trajectories.models import Command, Step
from trajectories.stepper_models import Call, CheckView, Output, conversation

from ..models import PreferencePair, Rollout
from .labels import Sides, sides

UNKNOWN = ("lost", "partial")  # final files whose content the replay could not know


@dataclass(frozen=True)
class StepView:
    index: int
    source: str
    message: Capped
    calls: list[Call]
    loose: list[Output]
    checks: list[CheckView]
    more_calls: int


@dataclass(frozen=True)
class Row:
    number: int  # 1-based position in the aligned view, what j / k move between
    left: StepView | None
    right: StepView | None
    same: bool


@dataclass(frozen=True)
class SideFiles:
    diffs: list[DiffView]
    more: int  # changed files past the diff limit


@dataclass(frozen=True)
class PairView:
    pair: PreferencePair
    sides: Sides
    shared: list[StepView]  # the prefix both sides share, shown once
    rows: list[Row]  # from the divergence on
    divergence: int | None  # the first differing step's number in ``rows``; None: identical
    left_steps: int
    right_steps: int
    left_files: SideFiles
    right_files: SideFiles
    fields: Fields  # every step's capped fields under one page budget, for "show more"


def _steps(trajectory_id: int | None) -> list[Step]:
    if trajectory_id is None:
        return []
    return list(Step.objects.filter(trajectory_id=trajectory_id).order_by("index"))


def _atif(step: Step) -> dict[str, Any]:
    """The Step row as the ATIF step ``align`` compares."""
    return {
        "source": step.source,
        "message": step.message,
        "reasoning_content": step.reasoning,
        "tool_calls": step.tool_calls,
        "observation": {"results": step.observations},
    }


def _views(
    trajectory_id: int | None, steps: list[Step], fields: Fields, side: str
) -> list[StepView]:
    commands: dict[int, list[Command]] = defaultdict(list)
    if trajectory_id is not None:
        for command in Command.objects.filter(trajectory_id=trajectory_id).order_by("index"):
            commands[command.step_index].append(command)
    views = []
    for step in steps:
        talk = conversation(step, commands.get(step.index, []), fields, f"{side}.{step.index}.")
        views.append(
            StepView(
                step.index,
                step.source,
                talk.message,
                talk.calls,
                talk.loose,
                talk.checks,
                talk.more_calls,
            )
        )
    return views


def end_files(start: Mapping[str, Any], facts: Mapping[str, Any] | None) -> tuple[dict, list]:
    """What a rollout left: path → sha from its facts over the task's starting files, and the
    paths whose content is unknown. With the collected world (``complete``), a file not in it is
    gone; otherwise only what the replay saw changes."""
    facts = facts or {}
    final: Mapping[str, Any] = facts.get("final") or {}
    end = {} if facts.get("complete") else dict(start)
    unknown = []
    for path, value in final.items():
        if value in UNKNOWN:
            unknown.append(path)
            end.pop(path, None)
        else:
            end[path] = value
    for path in facts.get("deleted") or ():
        end.pop(path, None)
    return end, sorted(unknown)


def side_files(start: Mapping[str, Any], rollout: Rollout) -> SideFiles:
    end, unknown = end_files(start, rollout.facts)
    diffs, more = files_changes(start, end)
    diffs += [
        DiffView(path, "lost", "Its content at the end is unknown: changed in a way not seen.")
        for path in unknown
    ]
    return SideFiles(diffs, more)


def pair_view(pair: PreferencePair, user: AbstractBaseUser) -> PairView:
    shown = sides(pair, user)
    rollouts = Rollout.objects.in_bulk([shown.left, shown.right])
    left, right = rollouts[shown.left], rollouts[shown.right]
    left_rows, right_rows = _steps(left.trajectory_id), _steps(right.trajectory_id)
    alignment = align([_atif(s) for s in left_rows], [_atif(s) for s in right_rows])
    fields = Fields()
    left_views = _views(left.trajectory_id, left_rows, fields, "a")
    right_views = _views(right.trajectory_id, right_rows, fields, "b")
    rows = [
        Row(
            number,
            left_views[r.a] if r.a is not None else None,
            right_views[r.b] if r.b is not None else None,
            r.same,
        )
        for number, r in enumerate(alignment.rows[alignment.prefix :], start=1)
    ]
    start = pair.task.candidate.start_files or {}
    return PairView(
        pair=pair,
        sides=shown,
        shared=left_views[: alignment.prefix],
        rows=rows,
        divergence=None if alignment.identical else 1,
        left_steps=len(left_rows),
        right_steps=len(right_rows),
        left_files=side_files(start, left),
        right_files=side_files(start, right),
        fields=fields,
    )
