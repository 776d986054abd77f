from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from groundwork.access.errors import Conflict
from project.htmx import render_fragment, render_page, wants_fragment
from tasks_review.models import STAGES, Candidate, PipelineRun
from tasks_review.roles import RUN_PIPELINE, VIEW_RUNS
from tasks_review.selectors import families
from tasks_review.selectors import runs as reads
from tasks_review.services.run_control import (
    pipeline_run_cancel,
    pipeline_run_rerun,
    pipeline_run_retry_ungraded,
)
from tasks_review.tasks import candidate_retry_enqueue, pipeline_run_enqueue

can_view = permission_required(VIEW_RUNS, raise_exception=True)
can_run = permission_required(RUN_PIPELINE, raise_exception=True)


@can_view
def run_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(PipelineRun.objects.all(), 30).get_page(request.GET.get("page"))
    return render_page(request, "tasks_review/runs/list.html", {"page": page}, "runs")


def _stages(run: PipelineRun) -> list[dict]:
    reached = STAGES.index(run.stage) if run.stage in STAGES else -1
    rows = []
    for i, name in enumerate(STAGES):
        if name in ("write", "verify") and run.config["pipeline"]["options"].get("propose_only"):
            continue
        state = "done" if i < reached or name in run.timings else "pending"
        if i == reached and not run.finished and name not in run.timings:
            state = "active"
        rows.append({"name": name, "state": state, "seconds": run.timings.get(name)})
    return rows


@can_view
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(PipelineRun, pk=pk)
    if wants_fragment(request, target=f"run-{run.pk}-progress"):
        response = render_fragment(
            request,
            "tasks_review/runs/detail.html#progress",
            {"run": run, "stages": _stages(run), "counts": reads.counts(run)},
            stop_polling=run.finished,
        )
        if run.finished:  # the page's drop lists are reloaded once, when polling stops
            response["HX-Refresh"] = "true"
        return response
    candidates = Candidate.objects.filter(run=run)
    drops = (
        candidates.filter(status=Candidate.Status.DROPPED)
        .values("drop_stage", "drop_reason")
        .annotate(n=Count("id"))
        .order_by("-n", "drop_reason")
    )
    dropped = {
        (d["drop_stage"], d["drop_reason"]): list(
            candidates.filter(
                status=Candidate.Status.DROPPED,
                drop_stage=d["drop_stage"],
                drop_reason=d["drop_reason"],
            )
            .select_related("trajectory")
            .order_by("id")[:50]
        )
        for d in drops
    }
    yields = reads.yields(run)
    return render_page(
        request,
        "tasks_review/runs/detail.html",
        {
            "run": run,
            "stages": _stages(run),
            "drop_groups": [(d, dropped[(d["drop_stage"], d["drop_reason"])]) for d in drops],
            "kept": candidates.exclude(status=Candidate.Status.DROPPED)
            .select_related("trajectory")
            .order_by("id")[:200],
            "ungraded": reads.ungraded(run),
            "yields": yields,
            "sides": reads.drop_sides(run),
            "counts": reads.counts(run, yields),
            "yield_tables": [("Harness", yields.by_harness), ("Language", yields.by_language)],
            "llm_use": families.llm_use(run),
            "skipped_families": families.skipped_families(run),
        },
    )


@can_view
def run_report(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(PipelineRun, pk=pk)
    if run.report is None:
        return JsonResponse({"error": "the run has not finished; no report yet"}, status=404)
    return JsonResponse(run.report, json_dumps_params={"indent": 2})


@require_POST
@can_run
def run_rerun(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        new = pipeline_run_rerun(run_id=pk, user=request.user)
    except PipelineRun.DoesNotExist:
        raise Http404("No such pipeline run.") from None
    except Conflict as exc:
        messages.error(request, str(exc))
        return redirect("runs:detail", pk=pk)
    pipeline_run_enqueue(new.id)
    messages.success(request, f"Run {new.pk} queued with the same config.")
    return redirect("runs:detail", pk=new.pk)


@require_POST
@can_run
def run_retry(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        ids = pipeline_run_retry_ungraded(run_id=pk, user=request.user)
    except PipelineRun.DoesNotExist:
        raise Http404("No such pipeline run.") from None
    except Conflict as exc:
        messages.error(request, str(exc))
        return redirect("runs:detail", pk=pk)
    for candidate_id in ids:
        candidate_retry_enqueue(pk, candidate_id)
    messages.success(request, f"Verifying {len(ids)} ungraded candidate(s) again.")
    return redirect("runs:detail", pk=pk)


@require_POST
@can_run
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        pipeline_run_cancel(run_id=pk, user=request.user)
        messages.success(request, "Cancelling: the run stops at its next item.")
    except PipelineRun.DoesNotExist:
        raise Http404("No such pipeline run.") from None
    except Conflict as exc:
        messages.error(request, str(exc))
    return redirect("runs:detail", pk=pk)
