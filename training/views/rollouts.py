"""Rollouts: importing a `harbor run` jobs folder (a job whose progress the page polls), the
rollouts with Harbor's reward beside ours, and putting a rollout back in line for grading."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_POST

from groundwork.access.errors import Refused, status_of
from project.htmx import render_fragment, render_page, wants_fragment
from training.views.access import can_run, can_view

from .. import tasks
from ..models import Rollout, RolloutImport
from ..selectors import rollouts as reads
from ..services.rollouts import rollout_import_create, rollout_regrade_again

PAGE_SIZE = 50
FINISHED_IMPORTS = (RolloutImport.Status.DONE, RolloutImport.Status.FAILED)


def _list_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    filters = reads.RolloutFilters.from_query(request.GET)
    page = Paginator(reads.rollout_search(filters), PAGE_SIZE).get_page(request.GET.get("page"))
    return {
        "page": page,
        "filters": filters,
        "query": filters.query(),
        "facets": reads.rollout_facets(),
        "imports": reads.recent_imports(),
        "error": "",
        "path": "",
        **extra,
    }


@can_view
@require_GET
def rollout_list(request: HttpRequest) -> HttpResponse:
    return render_page(
        request,
        "training/rollouts/list.html",
        _list_context(request),
        "rollouts",
        target="rollout-results",
    )


@can_run
@require_POST
def rollout_import(request: HttpRequest) -> HttpResponse:
    path = request.POST.get("path", "").strip()
    if not path:
        message = "Give the server path of a jobs folder (the one `harbor run -o` wrote)."
        return _import_refused(request, path, message, status=422)
    try:
        row = rollout_import_create(user=request.user, path=path)
    except Refused as error:
        return _import_refused(request, path, str(error), status=status_of(error))
    tasks.rollout_import_enqueue(row.pk)
    messages.success(request, f"Import {row.pk} queued: reading {row.path}.")
    return redirect("training:rollouts")


def _import_refused(request: HttpRequest, path: str, message: str, *, status: int) -> HttpResponse:
    context = _list_context(request, error=message, path=path)
    return render_page(request, "training/rollouts/list.html", context, status=status)


@can_view
@require_GET
def import_detail(request: HttpRequest, pk: int) -> HttpResponse:
    row = get_object_or_404(RolloutImport.objects.select_related("created_by"), pk=pk)
    finished = row.status in FINISHED_IMPORTS
    if wants_fragment(request, target=f"rollout-import-{row.pk}"):
        response = render_fragment(
            request, "training/partials/import.html", {"row": row}, stop_polling=finished
        )
        if finished:  # its rollouts join the list below once, when polling stops
            response["HX-Refresh"] = "true"
        return response
    rollouts = row.rollouts.select_related("candidate", "trajectory").order_by("id")
    return render_page(request, "training/rollouts/import.html", {"row": row, "rollouts": rollouts})


@can_run
@require_POST
def rollout_regrade(request: HttpRequest, pk: int) -> HttpResponse:
    rollout = get_object_or_404(Rollout, pk=pk)
    try:
        rollout_regrade_again(user=request.user, rollout_id=rollout.pk)
    except Refused as error:
        messages.error(request, str(error))
        return redirect("training:rollouts")
    tasks.regrade_enqueue([rollout.pk])
    if wants_fragment(request, target=f"rollout-{rollout.pk}"):
        fresh = Rollout.objects.select_related("candidate", "trajectory").get(pk=rollout.pk)
        return render_fragment(request, "training/partials/rollout_row.html", {"r": fresh})
    messages.success(request, f"Rollout {rollout.pk} is queued for grading again.")
    return redirect("training:rollouts")
