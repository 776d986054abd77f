"""Behaviours: the list, one behaviour's page (spec, versions, tasks by split, results), adding
and editing specs (each edit a new version), choosing kept tasks and starting an eval run."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from groundwork.access.errors import Refused, status_of
from project.htmx import render_page, wants_fragment
from training.views.access import can_edit, can_import, can_run, can_view, int_or_none
from trajectories.core.limits import echo

from .. import tasks
from ..core.spec import SpecError, load_spec
from ..models import Behaviour, BehaviourVersion
from ..selectors import authored as authored_reads
from ..selectors import behaviours as reads
from ..selectors import evals as eval_reads
from ..services import behaviours as services
from ..services.authored import authored_task_import
from ..services.evals import eval_run_create

MAX_K = 100
# Pages under /training/behaviours/ that a behaviour of the same slug would hide.
RESERVED_SLUGS = frozenset({"new", "seed"})

# What "New behaviour" starts from: valid, so a user edits rather than reads a schema first.
STARTER = """{
  "slug": "my-behaviour",
  "title": "Say in a few words what the agent should do",
  "description": "",
  "order_required": true,
  "pass_threshold": 1,
  "expected_actions": [
    {"kind": "read", "path": "**", "label": "read the code"},
    {"kind": "shell", "check": "test", "outcome": "passed", "label": "run the tests, passing"}
  ],
  "evidence": [
    {"kind": "check_passed", "check": "test", "after_last_edit": true},
    {"kind": "verified_reward", "at_least": 1}
  ],
  "forbidden": [{"name": "tamper_with_tests"}]
}
"""


@can_view
@require_GET
def behaviour_list(request: HttpRequest) -> HttpResponse:
    return render_page(request, "training/behaviours/list.html", _list_context(), "behaviours")


def _list_context() -> dict[str, Any]:
    return {"rows": reads.behaviour_rows(), "missing": reads.catalogue_missing()}


@can_edit
@require_POST
def behaviour_seed(request: HttpRequest) -> HttpResponse:
    added = services.behaviour_catalogue_seed(user=request.user)
    if added:
        messages.success(request, f"Added {len(added)} behaviour(s) from the catalogue.")
    else:
        messages.info(request, "Nothing to add: every catalogue behaviour is here already.")
    return redirect("training:behaviours")


# -- one behaviour ---------------------------------------------------------------------------------


def _behaviour(slug: str) -> Behaviour:
    return get_object_or_404(Behaviour, slug=slug)


def _detail_context(
    request: HttpRequest, behaviour: Behaviour, *, error: str = "", error_at: str = ""
) -> dict[str, Any]:
    version = reads.version_of(behaviour, int_or_none(request, "version"))
    if version is None:
        raise Http404("This behaviour has no such version.")
    run_id = int_or_none(request, "run")
    run = reads.shown_run(version, run_id)
    if run_id is not None and run is None:
        raise Http404("No such eval run of this version.")
    q = request.GET.get("q", "")
    choosable, choosable_count = reads.choosable_tasks(behaviour, q)
    return {
        "behaviour": behaviour,
        "version": version,
        "latest": behaviour.latest_version(),
        "spec": reads.spec_view(version),
        "versions": reads.versions_of(behaviour),
        "splits": reads.tasks_by_split(behaviour),
        "choosable": choosable,
        "choosable_count": choosable_count,
        "q": q,
        "runs": reads.runs_of(version),
        "run": run,
        "verdict": eval_reads.verdict(run) if run else None,
        "table": eval_reads.group_table(run) if run else None,
        "agents": reads.rollout_agents(behaviour),
        "authored_tasks": authored_reads.authored_tasks_of(behaviour),
        "error": error,
        "error_at": error_at,
        "form": request.POST if request.method == "POST" else {},
        "k": (request.POST.get("k") if request.method == "POST" else None) or (run.k if run else 1),
    }


@can_view
@require_GET
def behaviour_detail(request: HttpRequest, slug: str) -> HttpResponse:
    behaviour = _behaviour(slug)
    context = _detail_context(request, behaviour)
    template = "training/behaviours/detail.html"
    for fragment, target in (
        ("choosable", f"behaviour-{behaviour.pk}-choosable"),
        ("results", f"behaviour-{behaviour.pk}-results"),
    ):
        if wants_fragment(request, target):
            return render_page(request, template, context, fragment, target=target)
    return render_page(request, template, context)


def _detail_refused(
    request: HttpRequest, behaviour: Behaviour, message: str, *, status: int, at: str
) -> HttpResponse:
    context = _detail_context(request, behaviour, error=message, error_at=at)
    return render_page(request, "training/behaviours/detail.html", context, status=status)


@can_edit
@require_POST
def behaviour_tasks_add(request: HttpRequest, slug: str) -> HttpResponse:
    behaviour = _behaviour(slug)
    raw = request.POST.getlist("candidate")
    if not raw or not all(value.isdigit() for value in raw):
        message = "Choose at least one kept task to add." if not raw else "Unknown task numbers."
        return _detail_refused(request, behaviour, message, status=422, at="tasks")
    try:
        added = services.behaviour_tasks_add(
            user=request.user, behaviour_id=behaviour.pk, candidate_ids=[int(v) for v in raw]
        )
    except Refused as error:
        status = status_of(error)
        return _detail_refused(request, behaviour, str(error), status=status, at="tasks")
    held_out = sum(1 for task in added if task.split == "held_out")
    messages.success(
        request,
        f"Added {len(added)} task(s): {len(added) - held_out} train, {held_out} held-out "
        "(assigned once, never moved).",
    )
    return redirect(reverse("training:behaviour", args=[slug]) + "#tasks")


@can_edit
@require_POST
def behaviour_check_only(request: HttpRequest, slug: str) -> HttpResponse:
    behaviour = _behaviour(slug)
    allow = request.POST.get("allow") == "1"
    try:
        services.behaviour_check_only_set(user=request.user, behaviour_id=behaviour.pk, allow=allow)
    except Refused as error:
        return _detail_refused(request, behaviour, str(error), status=status_of(error), at="tasks")
    messages.success(
        request,
        "Check-only tasks now count for this behaviour's exports and gates."
        if allow
        else "Only equivalence-graded (and authored) tasks count for this behaviour now.",
    )
    return redirect(reverse("training:behaviour", args=[slug]) + "#tasks")


@can_edit
@require_POST
def behaviour_unreviewed(request: HttpRequest, slug: str) -> HttpResponse:
    return _opt_in(
        request,
        slug,
        services.behaviour_unreviewed_set,
        "Tasks still pending on the review desk now count for this behaviour's exports, pairs "
        "and gates (rejected and needs-fix ones never do).",
        "Only tasks accepted on the review desk count for this behaviour now.",
    )


@can_edit
@require_POST
def behaviour_reward_preferences(request: HttpRequest, slug: str) -> HttpResponse:
    return _opt_in(
        request,
        slug,
        services.behaviour_reward_preferences_set,
        "Unlabelled pairs now follow their verified reward in this behaviour's DPO exports.",
        "Only pairs people labelled enter this behaviour's DPO exports now.",
    )


def _opt_in(request: HttpRequest, slug: str, change: Any, on: str, off: str) -> HttpResponse:
    behaviour = _behaviour(slug)
    allow = request.POST.get("allow") == "1"
    try:
        change(user=request.user, behaviour_id=behaviour.pk, allow=allow)
    except Refused as error:
        return _detail_refused(request, behaviour, str(error), status=status_of(error), at="tasks")
    messages.success(request, on if allow else off)
    return redirect(reverse("training:behaviour", args=[slug]) + "#tasks")


@can_import
@require_POST
def behaviour_authored_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a Harbor task folder on this server for the trial matrix, for this behaviour."""
    behaviour = _behaviour(slug)
    path = request.POST.get("path", "").strip()
    if not path:
        message = "Give the server path of a Harbor task folder (task.toml, environment/, ...)."
        return _detail_refused(request, behaviour, message, status=422, at="authored")
    try:
        row = authored_task_import(user=request.user, path=path, behaviour_id=behaviour.pk)
    except Refused as error:
        return _detail_refused(
            request, behaviour, str(error), status=status_of(error), at="authored"
        )
    tasks.authored_task_enqueue(row.pk)
    messages.success(
        request,
        f"Authored task {row.pk} queued: its trial matrix runs in Docker; it joins the tasks "
        "below once kept.",
    )
    return redirect(reverse("training:behaviour", args=[slug]) + f"#authored-task-{row.pk}")


@can_run
@require_POST
def behaviour_eval_start(request: HttpRequest, slug: str) -> HttpResponse:
    behaviour = _behaviour(slug)
    version_raw, k_raw = request.POST.get("version", ""), request.POST.get("k", "1").strip()
    if not k_raw.lstrip("-").isdigit() or int(k_raw) > MAX_K:
        message = f"k must be a whole number from 1 to {MAX_K}, not {echo(k_raw)}."
        return _detail_refused(request, behaviour, message, status=422, at="eval")
    try:
        run = eval_run_create(
            user=request.user,
            behaviour_id=behaviour.pk,
            version_number=int(version_raw) if version_raw.isdigit() else None,
            agent=request.POST.get("agent", "").strip(),
            k=int(k_raw),
        )
    except Refused as error:
        return _detail_refused(request, behaviour, str(error), status=status_of(error), at="eval")
    tasks.eval_run_enqueue(run.pk)
    return redirect("training:eval", pk=run.pk)


# -- writing specs ---------------------------------------------------------------------------------


def _problems(text: str, *, new: bool = False) -> list[tuple[str, str]]:
    """The validator's problems as (JSON path, message); none when the spec is valid."""
    try:
        spec = load_spec(text)
    except SpecError as error:
        return [_at(problem) for problem in error.problems]
    if new and spec.slug in RESERVED_SLUGS:
        return [("$.slug", f"{spec.slug!r} names a page of its own here; choose another slug")]
    return []


def _at(problem: str) -> tuple[str, str]:
    path, sep, message = problem.partition(": ")
    return (path, message) if sep and path.startswith("$") else ("$", problem)


def _editor(
    request: HttpRequest,
    context: dict[str, Any],
    *,
    problems: list[tuple[str, str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {**context, "problems": problems or [], "forbidden": reads.FORBIDDEN_TITLES}
    return render_page(request, "training/behaviours/edit.html", context, "editor", status=status)


@can_edit
@require_http_methods(["GET", "POST"])
def behaviour_new(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _editor(request, {"behaviour": None, "text": STARTER, "note": ""})
    text = request.POST.get("spec", "")
    context = {"behaviour": None, "text": text, "note": ""}
    problems = _problems(text, new=True)
    if problems:
        return _editor(request, context, problems=problems, status=422)
    try:
        behaviour = services.behaviour_create(user=request.user, spec=text)
    except Refused as error:
        return _editor(request, context, problems=[("$", str(error))], status=status_of(error))
    messages.success(request, f"Behaviour {behaviour.slug} created (version 1).")
    return redirect("training:behaviour", slug=behaviour.slug)


@can_edit
@require_http_methods(["GET", "POST"])
def behaviour_edit(request: HttpRequest, slug: str) -> HttpResponse:
    behaviour = _behaviour(slug)
    latest: BehaviourVersion | None = behaviour.latest_version()
    if request.method == "GET":
        text = reads.spec_text(latest) if latest else ""
        return _editor(
            request, {"behaviour": behaviour, "latest": latest, "text": text, "note": ""}
        )
    text, note = request.POST.get("spec", ""), request.POST.get("note", "").strip()
    context = {"behaviour": behaviour, "latest": latest, "text": text, "note": note}
    problems = _problems(text)
    if problems:
        return _editor(request, context, problems=problems, status=422)
    try:
        version = services.behaviour_version_create(
            user=request.user, behaviour_id=behaviour.pk, spec=text, note=note
        )
    except Refused as error:
        return _editor(request, context, problems=[("$", str(error))], status=status_of(error))
    messages.success(
        request,
        f"Saved as version {version.number}; results of earlier versions keep theirs.",
    )
    return redirect(reverse("training:behaviour", args=[slug]) + f"?version={version.number}")
