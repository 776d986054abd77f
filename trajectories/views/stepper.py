"""The replay stepper: one step of a trajectory at a time, with its files, diff and checks, and
one file as it was at that step."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from project.htmx import render_fragment, render_page, wants_fragment

from .. import replay_reads as reads
from ..display import FILE_HTML, TREE_ROWS, Fields, sliced
from ..models import Step, Trajectory
from ..stepper_models import (
    call_window,
    calls_window_of,
    conversation,
    diff_views,
    file_view_of,
    replay_notice,
    tree_rows,
)
from . import can_review

WINDOW_RADIUS = 10  # steps listed either side of the current one


def _trajectory(pk: int) -> Trajectory:
    trajectory = reads.trajectory_for_stepper(trajectory_id=pk)
    if trajectory is None:
        raise Http404("No such trajectory.")
    return trajectory


def _step_files(trajectory: Trajectory, step: Step | None) -> tuple[reads.StepFiles | None, str]:
    replay = reads.replay_of(trajectory)
    if step is None or replay is None or trajectory.status != Trajectory.Status.REPLAYED:
        return None, replay_notice(trajectory)
    try:
        files = reads.step_files(replay=replay, step=step)
    except reads.ReplayIncomplete:
        return None, "Replay incomplete: its stored states are being rewritten. Reload in a moment."
    return files, "" if files else replay_notice(trajectory)


def _step_context(trajectory: Trajectory, index: int, *, path: str | None = None) -> dict[str, Any]:
    pk, count = trajectory.pk, trajectory.steps_count
    step = reads.step_get(trajectory_id=pk, index=index)
    if step is None and count:
        raise Http404("This step is missing from the stored trajectory.")
    files, notice = _step_files(trajectory, step)
    commands = reads.step_commands(trajectory_id=pk, index=index) if step else []
    talk = conversation(step, commands) if step else None
    previous_check, next_check = reads.check_neighbours(trajectory_id=pk, index=index)
    window = reads.step_window(trajectory_id=pk, index=index, count=count, radius=WINDOW_RADIUS)
    outcomes = (
        reads.checks_in(trajectory_id=pk, low=window[0].index, high=window[-1].index)
        if window
        else {}
    )
    diffs, undiffed = diff_views(files) if files else ([], [])
    opened = file_view_of(files, path) if files and path is not None else None
    if path is not None and opened is None:
        raise Http404("No such file at this step.")
    return {
        "trajectory": trajectory,
        "step": step,
        "index": index,
        "number": index + 1,
        "count": count,
        "progress": round(100 * (index + 1) / count, 2) if count else 0,
        "previous": index - 1 if index > 0 else None,
        "next": index + 1 if index + 1 < count else None,
        "previous_check": previous_check,
        "next_check": next_check,
        "window": [(s, outcomes.get(s.index, "none")) for s in window],
        "talk": talk,
        "more_url": _more_url(pk, index),
        "file_more_url": _more_url(pk, index, path),
        "checks": [c for c in commands if c.is_check],
        "files": files,
        "notice": notice,
        "tree": sliced(tree_rows(files) if files else [], count=TREE_ROWS),
        "diffs": diffs,
        "undiffed": undiffed,
        "opened": opened,
    }


def _more_url(pk: int, index: int, path: str | None = None) -> str:
    """Where a capped field of the step fetches its next slice; a file's names its path."""
    url = reverse("trajectories:step_more", args=[pk, index])
    return url if path is None else f"{url}?path={quote(path, safe='/')}"


def _go_to(trajectory: Trajectory, raw: str, index: int) -> int:
    """The index for a 1-based step number typed into "go to step", clamped to the steps."""
    try:
        wanted = int(raw.strip().lstrip("#")) - 1
    except ValueError:
        return index
    return max(0, min(wanted, trajectory.steps_count - 1))


@can_review
def step_view(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    trajectory = _trajectory(pk)
    last = max(trajectory.steps_count - 1, 0)
    if "go" in request.GET:
        return redirect("trajectories:step", pk, _go_to(trajectory, request.GET["go"], index))
    if index > last:
        return redirect("trajectories:step", pk, last)
    context = _step_context(trajectory, index)
    return render_page(request, "trajectories/stepper.html", context, "step")


@can_review
def file_view(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    path = request.GET.get("path", "")
    trajectory = _trajectory(pk)
    last = max(trajectory.steps_count - 1, 0)
    if index > last:
        url = reverse("trajectories:step_file", args=[pk, last])
        return redirect(f"{url}?{request.GET.urlencode(safe='/')}")
    if not wants_fragment(request):
        context = _step_context(trajectory, index, path=path)
        return render_page(request, "trajectories/stepper.html", context, "step")
    step = reads.step_get(trajectory_id=pk, index=index)
    files, _notice = _step_files(trajectory, step)
    opened = file_view_of(files, path) if files else None
    if opened is None:
        raise Http404("No such file at this step.")
    context = {
        "trajectory": trajectory,
        "index": index,
        "number": index + 1,
        "opened": opened,
        "file_more_url": _more_url(pk, index, path),
    }
    return render_fragment(request, "trajectories/partials/step_file.html#file", context)


@can_review
def more_view(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    """The next slice of one capped field of a step ("show more"), with its own marker when
    more remains."""
    trajectory = _trajectory(pk)
    step = reads.step_get(trajectory_id=pk, index=index)
    try:
        start = int(request.GET.get("start", "0"))
    except ValueError:
        start = 0
    if step is None:
        raise Http404("No such step.")
    key = request.GET.get("field", "")
    if key == "file":
        fields = Fields(budget=FILE_HTML)
        files, _notice = _step_files(trajectory, step)
        if files:
            file_view_of(files, request.GET.get("path", ""), fields)
    else:
        commands = reads.step_commands(trajectory_id=pk, index=index)
        window = calls_window_of(key)  # a field of a call past the page's own
        if window is None:
            fields = conversation(step, commands).fields
        else:
            fields = call_window(step, commands, start=window).fields
    part = fields.more(key, start)
    if part is None:
        raise Http404("No such field in this step.")
    context = {
        "trajectory": trajectory,
        "index": index,
        "number": index + 1,
        "start": max(0, min(start, part.end)),
        "c": part,
        "more_url": _more_url(pk, index, request.GET.get("path") if key == "file" else None),
    }
    return render_page(request, "trajectories/more.html", context, "more")


def _start(request: HttpRequest) -> int:
    try:
        return max(0, int(request.GET.get("start", "0")))
    except ValueError:
        return 0


@can_review
def tree_view(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    """The file tree's next rows at a step ("show more"), with its own marker when more remain."""
    trajectory = _trajectory(pk)
    step = reads.step_get(trajectory_id=pk, index=index)
    files, _notice = _step_files(trajectory, step)
    if files is None:
        raise Http404("No files at this step.")
    context = {
        "trajectory": trajectory,
        "index": index,
        "number": index + 1,
        "tree": sliced(tree_rows(files), start=_start(request), count=TREE_ROWS),
    }
    if wants_fragment(request):
        return render_fragment(request, "trajectories/partials/step_tree.html#rows", context)
    return render_page(request, "trajectories/tree.html", context)


@can_review
def calls_view(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    """The step's next tool calls ("show more"), with their results and their own marker."""
    trajectory = _trajectory(pk)
    step = reads.step_get(trajectory_id=pk, index=index)
    if step is None:
        raise Http404("No such step.")
    commands = reads.step_commands(trajectory_id=pk, index=index)
    context = {
        "trajectory": trajectory,
        "index": index,
        "number": index + 1,
        "window": call_window(step, commands, start=_start(request)),
        "more_url": _more_url(pk, index),
    }
    return render_page(request, "trajectories/calls.html", context, "calls")
