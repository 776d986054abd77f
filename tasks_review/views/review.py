"""The review desk: the queue, a candidate with its evidence beside the decision, disputes,
agreement, the audit log and dataset exports.

Trajectory-derived text (instructions, file contents, logs) is untrusted: templates escape it and
the only markup marked safe is Pygments output, which escapes its input.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.contrib.auth.decorators import permission_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

from groundwork.access.errors import Conflict, NotPermitted, Refused, status_of
from groundwork.models import AuditEvent
from groundwork.selectors import audit as audit_log
from groundwork.selectors import holds as hold_reads
from groundwork.services import holds
from project.htmx import render_fragment, render_page, wants_fragment
from tasks_review.models import Candidate, DatasetExport, Review, TrialRun
from tasks_review.services.candidate_holds import CANDIDATES
from trajectories.display import Capped, Fields, moment, shown_text

from ..roles import ADJUDICATE, AUDIT, EXPORT, REVIEW
from ..selectors import audit as blind_audit
from ..selectors import desk, families, reviewable, reviewer_agreement, trials
from ..selectors import disputes as dispute_reads
from ..selectors import exports as export_reads
from ..selectors import queue as queue_reads
from ..services import exports as export_services
from ..services import reviews
from ..tasks import dataset_export_enqueue

can_review = permission_required(REVIEW, raise_exception=True)
can_adjudicate = permission_required(ADJUDICATE, raise_exception=True)
can_export = permission_required(EXPORT, raise_exception=True)
can_audit = permission_required(AUDIT, raise_exception=True)

PAGE_SIZE = 50
AUDIT_PAGE_SIZE = 50
# The reasons in the order the number keys pick them.
REASONS = list(enumerate(Review.Reason.choices, start=1))


def _with_query(url: str, query: dict[str, str]) -> str:
    return f"{url}?{urlencode(query)}" if query else url


def candidate_url(pk: int, filters: queue_reads.QueueFilters) -> str:
    return _with_query(reverse("review:candidate", args=[pk]), filters.query())


# -- the queue -------------------------------------------------------------------------------------


@can_review
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    filters = queue_reads.QueueFilters.from_query(request.GET)
    page = Paginator(queue_reads.queue_search(filters, request.user), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    counts = queue_reads.queue_counts(filters, request.user)
    return render_page(
        request,
        "tasks_review/review/queue.html",
        {
            "page": page,
            "filters": filters,
            "query": urlencode(filters.query()),
            "counts": counts,
            "buckets": [
                (key, label, urlencode(filters.query(review=key)), counts[key])
                for key, label in queue_reads.BUCKETS.items()
            ],
            "facets": queue_reads.queue_facets(),
            "sorts": [(key, label) for key, (label, _) in queue_reads.SORTS.items()],
            "now": timezone.now(),
            "needed": reviewable.reviews_needed(),
            "hold": hold_reads.hold_length(),
            "held": _held_note(request, filters) if request.GET.get("done") else "",
            "reasons": REASONS,
        },
        "results",
        target="queue-results",
    )


@can_review
@require_POST
def next_candidate(request: HttpRequest) -> HttpResponse:
    """Hold the next candidate left for this reviewer and open it."""
    filters = queue_reads.QueueFilters.from_query(request.GET)
    candidate = holds.hold_next(CANDIDATES, user=request.user, scope=filters)
    if candidate is None:
        return redirect(_with_query(reverse("review:queue"), {**filters.query(), "done": "1"}))
    return redirect(candidate_url(candidate.pk, filters))


def _held_note(request: HttpRequest, filters: queue_reads.QueueFilters) -> str:
    held = queue_reads.held_by_others(request.user, timezone.now(), filters)
    return hold_reads.held_note(held, "candidate")


# -- one candidate ---------------------------------------------------------------------------------


def _candidate(pk: int) -> Candidate:
    return get_object_or_404(
        reviewable.reviewable().select_related("trajectory", "held_by", "run"), pk=pk
    )


def _desk_context(
    request: HttpRequest,
    candidate: Candidate,
    filters: queue_reads.QueueFilters,
    *,
    error: str = "",
    form: dict[str, str] | None = None,
    notice: str = "",
) -> dict[str, Any]:
    user = request.user
    now = timezone.now()
    seen = desk.reviews_for(candidate, user)
    trial_runs = trials.trials_for(candidate)
    changes, undiffed = desk.reference_changes(candidate)
    previous, following = queue_reads.neighbours(candidate.pk, user, now, filters)
    can_adjudicate_here = dispute_reads.settle_refusal(candidate, user) is None
    can_decide = (
        candidate.review_status == Candidate.ReviewStatus.PENDING and seen.mine is None
    ) or can_adjudicate_here
    hold = _hold_context(request, candidate, filters, now)
    query = filters.query()
    return {
        **hold,
        # Post the hold on load for a candidate this user could take: free, or theirs to renew.
        "take": can_decide and not hold["held_by_other"],
        "candidate": candidate,
        "instruction": shown_text(candidate.instruction),
        "family": families.family_facts(candidate),
        "trajectory": candidate.trajectory,
        "filters": filters,
        "query": urlencode(query),
        "reviews": seen,
        "trials": trials.trial_rows(trial_runs),
        "trial_summary": trials.trial_summary(trial_runs),
        "changes": changes,
        "undiffed": undiffed,
        "tree": desk.start_tree(candidate),
        "previous_url": candidate_url(previous, filters) if previous else None,
        "next_url": candidate_url(following, filters) if following else None,
        "queue_url": _with_query(reverse("review:queue"), query),
        "can_decide": can_decide and not hold["held_by_other"],
        "adjudicating": can_adjudicate_here,
        "decide_url": _with_query(
            reverse(
                "review:adjudicate" if can_adjudicate_here else "review:decide",
                args=[candidate.pk],
            ),
            query,
        ),
        "reasons": REASONS,
        "decisions": Review.Decision.choices,
        "error": error,
        "form": form or {},
        "notice": notice,
        "now": now,
    }


def _hold_context(
    request: HttpRequest,
    candidate: Candidate,
    filters: queue_reads.QueueFilters,
    now: datetime,
) -> dict[str, Any]:
    """Who holds the candidate, as its hold banner shows it, and how the page renews its own
    hold (a beat while in use) and gives it back on leaving."""
    release_url = reverse("review:release", args=[candidate.pk])
    return {
        "candidate": candidate,
        "held_by_me": hold_reads.is_held_by(candidate, request.user, now),
        "held_by_other": hold_reads.is_held_by_other(candidate, request.user, now),
        "take": False,
        "hold_url": _with_query(reverse("review:hold", args=[candidate.pk]), filters.query()),
        "beat": hold_reads.hold_beat_seconds(),
        "leave_url": _with_query(release_url, {"left": "1"}),
        "query": urlencode(filters.query()),
    }


def _hold_on_open(request: HttpRequest, candidate: Candidate) -> Candidate:
    """Hold a candidate one could work if it is free; anything else just shows it."""
    try:
        return holds.hold(CANDIDATES, user=request.user, row_id=candidate.pk)
    except Refused:
        return candidate


def _desk(
    request: HttpRequest,
    candidate: Candidate,
    filters: queue_reads.QueueFilters,
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    context = _desk_context(request, candidate, filters, **extra)
    return render_page(
        request, "tasks_review/review/candidate.html", context, "desk", status=status
    )


@can_review
@require_GET
def candidate_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The desk; it writes nothing (the page posts `hold` once it is up)."""
    filters = queue_reads.QueueFilters.from_query(request.GET)
    return _desk(request, _candidate(pk), filters)


@can_review
@require_POST
def hold(request: HttpRequest, pk: int) -> HttpResponse:
    """Hold the candidate, or renew one's hold: the hold banner under htmx, the desk without."""
    filters = queue_reads.QueueFilters.from_query(request.GET)
    candidate = _hold_on_open(request, _candidate(pk))
    if not wants_fragment(request):
        return redirect(candidate_url(pk, filters))
    if not hold_reads.is_held_by(candidate, request.user, timezone.now()):
        candidate = _candidate(pk)  # refused: show who holds it now
    return render_fragment(
        request,
        "tasks_review/review/candidate.html#hold",
        _hold_context(request, candidate, filters, timezone.now()),
    )


def _after_decision(
    request: HttpRequest,
    next_pk: int | None,
    filters: queue_reads.QueueFilters,
    *,
    empty_url: str,
    notice: str,
) -> HttpResponse:
    """The next candidate in place of the one just decided: a swap of the desk (and its URL)
    under htmx, a redirect without it."""
    if next_pk is None:
        if not wants_fragment(request):
            return redirect(empty_url)
        response = render_fragment(
            request,
            "tasks_review/review/candidate.html#empty",
            {"queue_url": empty_url, "notice": notice, "held": _held_note(request, filters)},
        )
        return push_url(response, empty_url)
    url = candidate_url(next_pk, filters)
    if not wants_fragment(request):
        return redirect(url)
    candidate = _candidate(next_pk)
    response = _desk(request, candidate, filters, notice=notice)
    return push_url(response, url)


def _refused(
    request: HttpRequest,
    pk: int,
    filters: queue_reads.QueueFilters,
    exc: Refused,
) -> HttpResponse:
    status = status_of(exc)
    return _desk(
        request, _candidate(pk), filters, status=status, error=str(exc), form=_posted(request)
    )


def _posted(request: HttpRequest) -> dict[str, str]:
    """The decision form as posted: decision, reason and comment."""
    return {k: request.POST.get(k, "") for k in ("decision", "reason", "comment")}


@can_review
@require_POST
def decide(request: HttpRequest, pk: int) -> HttpResponse:
    filters = queue_reads.QueueFilters.from_query(request.GET)
    try:
        review = reviews.review_submit(user=request.user, candidate_id=pk, **_posted(request))
    except NotPermitted:
        raise
    except Refused as exc:
        return _refused(request, pk, filters, exc)
    following = holds.hold_next(CANDIDATES, user=request.user, scope=filters, after=pk)
    return _after_decision(
        request,
        following.pk if following else None,
        filters,
        empty_url=_with_query(reverse("review:queue"), filters.query()),
        notice=f"Candidate #{pk}: {review.get_decision_display().lower()} "
        f"({review.get_reason_display().lower()}) recorded.",
    )


@can_adjudicate
@require_POST
def adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    filters = queue_reads.QueueFilters.from_query(request.GET)
    try:
        review = reviews.review_adjudicate(user=request.user, candidate_id=pk, **_posted(request))
    except NotPermitted:
        raise
    except Refused as exc:
        return _refused(request, pk, filters, exc)
    following = dispute_reads.next_dispute(pk, request.user, timezone.now())
    if following is not None:
        following = _hold_on_open(request, _candidate(following)).pk
    return _after_decision(
        request,
        following,
        filters,
        empty_url=reverse("review:disputes"),
        notice=f"Candidate #{pk} settled: {review.get_decision_display().lower()}.",
    )


@can_review
@require_POST
def release(request: HttpRequest, pk: int) -> HttpResponse:
    """Give the candidate back: the banner's button, or (``?left=1``) the beacon the desk sends
    as its tab closes or navigates away, which reads no answer."""
    filters = queue_reads.QueueFilters.from_query(request.GET)
    left = request.GET.get("left") == "1"
    try:
        holds.release(CANDIDATES, user=request.user, row_id=pk, left=left)
    except NotPermitted:
        raise
    except Refused as exc:
        return HttpResponse(status=409) if left else _refused(request, pk, filters, exc)
    if left:
        return HttpResponse(status=204)
    return redirect(_with_query(reverse("review:queue"), filters.query()))


def _trial(pk: int, trial_pk: int) -> TrialRun:
    return get_object_or_404(
        TrialRun.objects.select_related("candidate"),
        pk=trial_pk,
        candidate_id=pk,
        candidate__status__in=reviewable.REVIEWABLE,
    )


def _log_fields(trial: TrialRun) -> tuple[Fields, Capped, Capped]:
    fields = Fields()
    return fields, fields.add("error", trial.error, None), fields.add("logs", trial.logs, None)


@can_review
@require_GET
def trial_logs(request: HttpRequest, pk: int, trial_pk: int) -> HttpResponse:
    trial = _trial(pk, trial_pk)
    _fields, error, logs = _log_fields(trial)
    context = {
        "trial": trial,
        "candidate": trial.candidate,
        "error": error,
        "logs": logs,
        "more_url": reverse("review:trial_logs_more", args=[pk, trial_pk]),
    }
    return render_page(request, "tasks_review/review/trial_logs.html", context, "logs")


@can_review
@require_GET
def trial_logs_more(request: HttpRequest, pk: int, trial_pk: int) -> HttpResponse:
    """The next slice of a trial's logs or error ("show more")."""
    try:
        start = int(request.GET.get("start", "0"))
    except ValueError:
        start = 0
    part = _log_fields(_trial(pk, trial_pk))[0].more(request.GET.get("field", ""), start)
    if part is None:
        raise Http404("No such field.")
    context = {"c": part, "more_url": reverse("review:trial_logs_more", args=[pk, trial_pk])}
    return render_fragment(request, "trajectories/partials/capped.html", context)


# -- disputes, agreement ---------------------------------------------------------------------------


@can_adjudicate
@require_GET
def disputes(request: HttpRequest) -> HttpResponse:
    page = Paginator(dispute_reads.disputes(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render_page(
        request,
        "tasks_review/review/disputes.html",
        {"page": page, "now": timezone.now()},
    )


@can_audit
@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    return render_page(
        request,
        "tasks_review/review/agreement.html",
        {
            "agreement": reviewer_agreement.agreement(request.user),
            "needed": reviewable.reviews_needed(),
            "blind": reviewable.bound_by_blind_review(request.user),
        },
    )


# -- audit -----------------------------------------------------------------------------------------


@can_audit
@require_GET
def audit(request: HttpRequest) -> HttpResponse:
    filters = audit_log.AuditFilters.from_query(request.GET)
    page = Paginator(audit_log.audit_search(filters), AUDIT_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    events = list(page.object_list)
    blinded = blind_audit.audit_blinded(events, request.user)
    query = request.GET.copy()
    query.pop("page", None)
    return render_page(
        request,
        "tasks_review/review/audit.html",
        {
            "page": page,
            "events": [(e, e.pk in blinded, _changes(e)) for e in events],
            "filters": filters,
            "facets": audit_log.audit_facets(),
            "querystring": query.urlencode(),
        },
        "results",
        target="audit-results",
    )


def _changes(event: AuditEvent) -> list[tuple[str, str, str, bool]]:
    """(key, before, after, changed) for every key either side holds, values as compact JSON."""
    before, after = event.before or {}, event.after or {}
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [("value", _json(event.before), _json(event.after), event.before != event.after)]
    rows = []
    for key in dict.fromkeys([*before, *after]):
        old = _json(before[key]) if key in before else ""
        new = _json(after[key]) if key in after else ""
        rows.append((key, old, new, before.get(key) != after.get(key)))
    return rows


def _json(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, str):
        return str(moment(value))  # a stored ISO time ("held_until") shown to the second
    return json.dumps(value, ensure_ascii=False)


# -- export ----------------------------------------------------------------------------------------


@can_export
def exports(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        try:
            export = export_services.dataset_export_create(user=request.user)
        except Conflict as exc:
            return _exports_page(request, error=str(exc), status=409)
        dataset_export_enqueue(export.pk)
        return redirect("review:exports")
    if request.method != "GET":
        return HttpResponse(status=405, headers={"Allow": "GET, POST"})
    return _exports_page(request)


def _exports_page(request: HttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
    page = Paginator(DatasetExport.objects.select_related("created_by"), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render_page(
        request,
        "tasks_review/review/exports.html",
        {"page": page, "ready": export_reads.exportable().count(), "error": error},
        status=status,
    )


@can_export
@require_GET
def export_detail(request: HttpRequest, pk: int) -> HttpResponse:
    export = get_object_or_404(DatasetExport.objects.select_related("created_by"), pk=pk)
    if not wants_fragment(request):
        return render_page(request, "tasks_review/review/export.html", {"export": export})
    # The finished row still replaces the running one; then htmx stops polling.
    return render_fragment(
        request,
        "tasks_review/partials/export_row.html",
        {"export": export},
        stop_polling=export.status in (DatasetExport.Status.DONE, DatasetExport.Status.FAILED),
    )


@can_export
@require_GET
def export_manifest(request: HttpRequest, pk: int) -> HttpResponse:
    export = get_object_or_404(DatasetExport, pk=pk)
    if export.manifest is None:
        raise Http404("This export has no manifest yet.")
    return JsonResponse(export.manifest, json_dumps_params={"indent": 2})
