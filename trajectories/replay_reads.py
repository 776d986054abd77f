"""Reads behind the replay stepper: one step, the files at that step, and what it changed.

Every lookup costs the same whatever the step number: one Step row, one Replay header, at most
two ReplayChunk rows (the checkpoint before the step's first event and the one before its last)
and only the blobs on screen. Neither the trajectory's ATIF document nor its other steps are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db.models.fields.json import KT
from django.db.models.functions import Left

from .core.replay import Entry, FileDiff, Status, locate, state_from
from .core.replay.index import apply_value
from .core.replay.model import TREE
from .display import shown_texts
from .models import Blob, Command, Replay, ReplayChunk, Step, Trajectory

GIST_READ_CHARS = 600  # of a step's message read for its 80-character label in the step list


class ReplayIncomplete(LookupError):
    """The replay header exists but a chunk it needs is gone (a replay being rewritten)."""


@dataclass(frozen=True)
class StepFiles:
    before: Mapping[str, Entry]  # after the previous step
    after: Mapping[str, Entry]  # after this step
    changes: list[FileDiff]  # files first, tree markers last, each sorted by path

    def changed(self, path: str) -> FileDiff | None:
        return next((c for c in self.changes if c.path == path), None)


@dataclass(frozen=True)
class StepSummary:
    """A neighbour in the step list: enough to label it, not its content."""

    index: int
    source: str
    tool: str
    gist: str


def trajectory_for_stepper(*, trajectory_id: int) -> Trajectory | None:
    """The trajectory's header row with its replay header; large fields stay in the database."""
    return (
        Trajectory.objects.select_related("replay")
        .only(
            "id",
            "title",
            "session_id",
            "format",
            "agent_name",
            "model_name",
            "status",
            "replay_error",
            "steps_count",
            "cwd",
            "replay__id",
            "replay__every",
            "replay__events",
            "replay__root",
            "replay__trajectory_id",
        )
        .filter(id=trajectory_id)
        .first()
    )


def replay_of(trajectory: Trajectory) -> Replay | None:
    try:
        return trajectory.replay
    except Replay.DoesNotExist:
        return None


def step_get(*, trajectory_id: int, index: int) -> Step | None:
    return Step.objects.filter(trajectory_id=trajectory_id, index=index).first()


def step_state(trajectory: Trajectory, index: int) -> dict[str, Entry]:
    """The files after step ``index``: its event bound, then one chunk. LookupError if the step
    or its replay is missing."""
    replay = replay_of(trajectory)
    end = (
        Step.objects.filter(trajectory_id=trajectory.pk, index=index)
        .values_list("events_end", flat=True)
        .first()
    )
    if replay is None or end is None:
        raise LookupError(f"step {index} of trajectory {trajectory.pk} has no replayed state")
    number, offset = locate(replay.every, end)
    chunk = ReplayChunk.objects.filter(replay=replay, number=number).only("checkpoint", "deltas")
    found = chunk.first()
    if found is None:
        raise ReplayIncomplete(f"replay {replay.pk} lacks chunk {number}")
    return state_from(found.checkpoint, found.deltas[:offset])


def step_files(*, replay: Replay, step: Step) -> StepFiles | None:
    """The files before and after ``step`` rebuilt from at most two chunks; None if not replayed."""
    if step.events_start is None or step.events_end is None:
        return None
    first, first_offset = locate(replay.every, step.events_start)
    last, last_offset = locate(replay.every, step.events_end)
    chunks = {
        c.number: c
        for c in ReplayChunk.objects.filter(replay=replay, number__in={first, last}).only(
            "number", "checkpoint", "deltas"
        )
    }
    if first not in chunks or last not in chunks:
        raise ReplayIncomplete(
            f"replay {replay.pk} lacks chunk {first if first not in chunks else last}"
        )
    start = chunks[first]
    before = state_from(start.checkpoint, start.deltas[:first_offset])
    if last == first:
        after = dict(before)
        for delta in start.deltas[first_offset:last_offset]:
            for key, value in delta:
                apply_value(after, key, value)
    else:
        end = chunks[last]
        after = state_from(end.checkpoint, end.deltas[:last_offset])
    return StepFiles(before=before, after=after, changes=files_diff(before, after))


def files_diff(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> list[FileDiff]:
    """Entries that differ, files before tree markers (the order ``StateIndex.diff`` uses)."""
    keys = sorted(set(before) | set(after), key=lambda k: (k.endswith(TREE), k))
    return [FileDiff(k, before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)]


def blob_contents(shas: Iterable[str | None]) -> dict[str, bytes]:
    """The content of each known sha, in one query."""
    wanted = {s for s in shas if s}
    if not wanted:
        return {}
    return {b.sha256: b.content() for b in Blob.objects.filter(sha256__in=wanted)}


def known_sha(entry: Entry | None) -> str | None:
    return entry.sha if entry is not None and entry.status is Status.KNOWN else None


def step_commands(*, trajectory_id: int, index: int) -> list[Command]:
    # Sorted here: ORDER BY "index" would lead the database to walk the trajectory's every
    # command along the (trajectory, index) key instead of seeking (trajectory, step_index).
    rows = Command.objects.filter(trajectory_id=trajectory_id, step_index=index).order_by()
    return sorted(rows, key=lambda c: c.index)


def check_neighbours(*, trajectory_id: int, index: int) -> tuple[int | None, int | None]:
    """The nearest step before and after ``index`` that ran a check (test, build, lint …)."""
    checks = Command.objects.filter(trajectory_id=trajectory_id).exclude(check_kind="")
    previous = (
        checks.filter(step_index__lt=index)
        .order_by("-step_index")
        .values_list("step_index", flat=True)
        .first()
    )
    following = (
        checks.filter(step_index__gt=index)
        .order_by("step_index")
        .values_list("step_index", flat=True)
        .first()
    )
    return previous, following


def step_window(*, trajectory_id: int, index: int, count: int, radius: int) -> list[StepSummary]:
    """The steps around ``index`` for the step list: labels only, never the step's full content."""
    low = max(0, min(index - radius, count - 2 * radius - 1))
    high = min(count - 1, low + 2 * radius)
    rows = list(
        Step.objects.filter(trajectory_id=trajectory_id, index__gte=low, index__lte=high)
        .annotate(
            tool=KT("tool_calls__0__function_name"),
            gist=Left("message", GIST_READ_CHARS),
        )
        .order_by("index")
        .values("index", "source", "tool", "gist")
    )
    # Redacted before the cut, on a head long enough to hold a secret that starts in the label
    # whole: a secret cut first would no longer be recognised.
    gists = shown_texts([r["gist"] or "" for r in rows])
    return [
        StepSummary(
            index=r["index"],
            source=r["source"],
            tool=r["tool"] or "",
            gist=" ".join(gist.split())[:80],
        )
        for r, gist in zip(rows, gists, strict=True)
    ]


def checks_in(*, trajectory_id: int, low: int, high: int) -> dict[int, bool | None]:
    """Per step in ``low..high`` that ran checks: True if all passed, False if one failed."""
    codes: dict[int, list[int | None]] = {}
    rows = (
        Command.objects.filter(
            trajectory_id=trajectory_id, step_index__gte=low, step_index__lte=high
        )
        .exclude(check_kind="")
        .order_by()  # the model's default ordering would join the trajectory table
        .values_list("step_index", "exit_code")
    )
    for step, code in rows:
        codes.setdefault(step, []).append(code)
    return {
        step: False
        if any(c not in (0, None) for c in found)
        else (True if all(c == 0 for c in found) else None)
        for step, found in codes.items()
    }
