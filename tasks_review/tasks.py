"""django-q2 jobs for pipeline runs. They take ids and claim their row."""

from __future__ import annotations

from functools import partial

from django.db import transaction
from django_q.tasks import async_task


def pipeline_run_enqueue(run_id: int) -> None:
    transaction.on_commit(
        partial(async_task, "tasks_review.tasks.pipeline_run_job", run_id, group="pipeline")
    )


def pipeline_run_job(run_id: int) -> str:
    from tasks_review.services.pipeline import pipeline_run_execute

    run = pipeline_run_execute(run_id=run_id)
    return "not claimed" if run is None else run.status
