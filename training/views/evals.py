"""An eval run's page (progress polled while it runs, then its verdict, groups and results) and
one result's page: each expectation matched or missed, linked to the replay stepper at its step,
with the next and previous result of the list it was opened from (keys j and k)."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from project.htmx import render_fragment, render_page, wants_fragment

from ..models import EvalResult, EvalRun
from ..selectors import evals as reads
from .access import can_view

PAGE_SIZE = 50


@can_view
@require_GET
def eval_run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(
        EvalRun.objects.select_related("version__behaviour", "created_by"), pk=pk
    )
    template = "training/evals/detail.html"
    if wants_fragment(request, target=f"eval-run-{run.pk}-progress"):
        response = render_fragment(
            request, f"{template}#progress", {"run": run}, stop_polling=run.finished
        )
        if run.finished:  # the verdict, groups and results load once, when polling stops
            response["HX-Refresh"] = "true"
        return response
    filters = reads.ResultFilters.from_query(request.GET)
    page = Paginator(reads.result_search(run, filters), PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "run": run,
        "behaviour": run.version.behaviour,
        "verdict": reads.verdict(run),
        "table": reads.group_table(run),
        "page": page,
        "results": [(result, reads.result_items(result)) for result in page.object_list],
        "filters": filters,
        "query": filters.query(),
        "agents": reads.result_agents(run),
        "splits": list(reads.SPLIT_LABELS.items()),
    }
    return render_page(request, template, context, "results", target=f"eval-run-{run.pk}-results")


@can_view
@require_GET
def result_detail(request: HttpRequest, pk: int) -> HttpResponse:
    result = get_object_or_404(
        EvalResult.objects.select_related(
            "run__version__behaviour", "rollout__trajectory", "task__candidate"
        ),
        pk=pk,
    )
    filters = reads.ResultFilters.from_query(request.GET)
    before, after = reads.result_neighbours(result, filters)
    context = {
        "result": result,
        "run": result.run,
        "rollout": result.rollout,
        "items": reads.result_items(result),
        "query": filters.query(),
        "before": before,
        "after": after,
    }
    return render_page(
        request, "training/evals/result.html", context, "items", target=f"result-{result.pk}-items"
    )
