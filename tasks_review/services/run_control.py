"""What people do to a pipeline run once it exists: cancel it, run it again, retry its ungraded
candidates. Each checks the role inside (a script or a worker must not slip past the views) and
leaves an audit row in the same transaction as the change."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from groundwork.access.errors import Conflict, require
from groundwork.services.audit import audit_event_record
from tasks_review.models import Candidate, PipelineRun
from tasks_review.roles import RUN_PIPELINE


def _state(run: PipelineRun) -> dict[str, object]:
    return {"status": run.status, "cancel_requested": run.cancel_requested}


def pipeline_run_cancel(*, run_id: int, user: AbstractBaseUser) -> PipelineRun:
    """A queued run is cancelled outright; a running one stops at its next item."""
    require(user, RUN_PIPELINE, "cancel pipeline runs")
    with transaction.atomic():
        run = PipelineRun.objects.select_for_update().get(id=run_id)
        if run.finished:
            raise Conflict(f"run {run_id} has already finished ({run.status})")
        before = _state(run)
        PipelineRun.objects.filter(id=run_id, status=PipelineRun.Status.QUEUED).update(
            status=PipelineRun.Status.CANCELLED, finished_at=timezone.now()
        )
        PipelineRun.objects.filter(id=run_id).update(cancel_requested=True)
        run.refresh_from_db()
        audit_event_record(
            actor=user, verb="pipeline_run.cancel", target=run, before=before, after=_state(run)
        )
    return run


def pipeline_run_rerun(*, run_id: int, user: AbstractBaseUser) -> PipelineRun:
    """A new run with the finished run's config."""
    require(user, RUN_PIPELINE, "run pipelines")
    with transaction.atomic():
        old = PipelineRun.objects.get(id=run_id)
        if not old.finished:
            raise Conflict(f"run {run_id} is still {old.status}; cancel it first")
        new = PipelineRun.objects.create(
            config=old.config,
            config_path=old.config_path,
            destination=old.destination,
            created_by=user,
        )
        audit_event_record(
            actor=user,
            verb="pipeline_run.rerun",
            target=new,
            before=None,
            after={"rerun_of": old.id, "status": new.status},
        )
    return new


def pipeline_run_retry_ungraded(*, run_id: int, user: AbstractBaseUser) -> list[int]:
    """The finished run's ungraded candidates, for one retry job each (``candidate_retry``)."""
    require(user, RUN_PIPELINE, "retry ungraded candidates")
    with transaction.atomic():
        run = PipelineRun.objects.get(id=run_id)
        if not run.finished:
            raise Conflict(f"run {run_id} is still {run.status}; its lanes retry nothing")
        ids = list(
            Candidate.objects.filter(run=run, status=Candidate.Status.UNGRADED)
            .order_by("id")
            .values_list("id", flat=True)
        )
        if not ids:
            raise Conflict(f"run {run_id} has no ungraded candidate")
        audit_event_record(
            actor=user,
            verb="pipeline_run.retry",
            target=run,
            before=None,
            after={"candidates": ids},
        )
    return ids
