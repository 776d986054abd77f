"""django-q2 jobs for pipeline runs. They take ids and claim their rows.

A run is one job up to its verify stage; verification is then one job per candidate, run in
``jobs`` lanes (each job queues its lane's next), so the q2 time limit bounds one candidate's
trial matrix, not a whole run.
"""

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

    run = pipeline_run_execute(run_id=run_id, queued=True)
    return "not claimed" if run is None else run.status


def pipeline_verify_enqueue(run_id: int) -> None:
    """One more lane step of a run's verify stage: a job that verifies one candidate."""
    transaction.on_commit(
        partial(
            async_task,
            "tasks_review.tasks.pipeline_verify_job",
            run_id,
            group=f"verify-run-{run_id}",
        )
    )


def pipeline_verify_job(run_id: int) -> str:
    from tasks_review.services.pipeline import pipeline_verify_next

    return pipeline_verify_next(run_id=run_id)


def candidate_retry_enqueue(run_id: int, candidate_id: int) -> None:
    transaction.on_commit(
        partial(
            async_task,
            "tasks_review.tasks.candidate_retry_job",
            run_id,
            candidate_id,
            group=f"verify-run-{run_id}",
        )
    )


def candidate_retry_job(run_id: int, candidate_id: int) -> str:
    from tasks_review.services.pipeline import candidate_retry

    return candidate_retry(run_id=run_id, candidate_id=candidate_id)
