"""django-q2 jobs of the tasks_review app, and the only module here that enqueues.

Jobs take ids, call services, and queue what a service says comes next (``Next``); services
never enqueue. Docker work runs on the docker cluster, so a long trial matrix never delays a
replay: a run's job (it builds images), its verify lanes and candidate retries. Verification is
one job per candidate, in ``jobs`` lanes (each lane's job queues its next), so the q2 time limit
bounds one candidate's trial matrix, not a whole run.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from groundwork.jobs.heartbeat import dead_before
from groundwork.jobs.queue import DOCKER, enqueue_on_commit, unless_gone
from groundwork.jobs.redelivery import Lost, each, redeliver, summary
from tasks_review.models import Candidate, DatasetExport, PipelineRun
from tasks_review.services.exports import dataset_export_execute
from tasks_review.services.pipeline import (
    Next,
    candidate_retry,
    pipeline_run_execute_queued,
    pipeline_verify_next,
)


def pipeline_run_enqueue(run_id: int) -> None:
    enqueue_on_commit("tasks_review.tasks.pipeline_run_job", run_id, group="pipeline", queue=DOCKER)


def pipeline_run_job(run_id: int) -> str:
    return unless_gone(
        PipelineRun,
        run_id,
        lambda: _queue_next(run_id, pipeline_run_execute_queued(run_id=run_id)),
    )


def pipeline_verify_enqueue(run_id: int) -> None:
    """One more lane step of a run's verify stage: a job that verifies one candidate."""
    enqueue_on_commit(
        "tasks_review.tasks.pipeline_verify_job",
        run_id,
        group=f"verify-run-{run_id}",
        queue=DOCKER,
    )


def pipeline_verify_job(run_id: int) -> str:
    return unless_gone(
        PipelineRun, run_id, lambda: _queue_next(run_id, pipeline_verify_next(run_id=run_id))
    )


def _queue_next(run_id: int, step: Next) -> str:
    for _ in range(step.lanes):
        pipeline_verify_enqueue(run_id)
    return step.summary


def candidate_retry_enqueue(run_id: int, candidate_id: int) -> None:
    enqueue_on_commit(
        "tasks_review.tasks.candidate_retry_job",
        run_id,
        candidate_id,
        group=f"verify-run-{run_id}",
        queue=DOCKER,
    )


def candidate_retry_job(run_id: int, candidate_id: int) -> str:
    # The run is the row that matters: a deleted candidate is simply not claimable.
    return unless_gone(
        PipelineRun,
        run_id,
        lambda: candidate_retry(run_id=run_id, candidate_id=candidate_id),
    )


def dataset_export_enqueue(export_id: int) -> None:
    enqueue_on_commit(
        "tasks_review.tasks.dataset_export_job",
        export_id,
        task_name=f"dataset-export-{export_id}",
    )


def dataset_export_job(export_id: int) -> str:
    def export() -> str:
        done = dataset_export_execute(export_id=export_id)
        return "not claimed" if done is None else done.status

    return unless_gone(DatasetExport, export_id, export)


def _lost() -> list[Lost]:
    R, C = PipelineRun.Status, Candidate.Status
    unfinished = PipelineRun.objects.filter(finished_at__isnull=True)
    pending = Candidate.objects.filter(run=OuterRef("pk"), status__in=(C.WRITTEN, C.VERIFYING))
    verifying = Candidate.objects.filter(
        run=OuterRef("pk"), status=C.VERIFYING, heartbeat_at__gte=dead_before()
    )
    return [
        # A run's own job (every stage up to verify) whose worker died, or that never started.
        PipelineRun.lost(
            "pipeline runs",
            rows=unfinished.exclude(stage="verify"),
            enqueue=each(pipeline_run_enqueue),
            waiting=Q(status=R.QUEUED, cancel_requested=False),
        ),
        # A run verifying with no lane left: candidates wait, and none is verified by a live
        # worker (the lanes that remain take a dead lane's candidate themselves).
        Lost(
            "verify lanes",
            unfinished.filter(stage="verify", status=R.RUNNING),
            enqueue=each(pipeline_verify_enqueue),
            orphaned=Q(Exists(pending))
            & ~Q(Exists(verifying))
            & Q(stage_started_at__lt=dead_before()),
        ),
        # A retry of a finished run's candidate whose worker died.
        Candidate.lost(
            "candidate retries",
            rows=Candidate.objects.filter(run__finished_at__isnull=False),
            enqueue=_retries_enqueue,
            waiting=None,  # ungraded waits for a person to retry it, not for a lost job
        ),
        DatasetExport.lost("dataset exports", enqueue=each(dataset_export_enqueue)),
    ]


def _retries_enqueue(candidate_ids: list[int]) -> None:
    for candidate_id, run_id in Candidate.objects.filter(id__in=candidate_ids).values_list(
        "id", "run_id"
    ):
        candidate_retry_enqueue(run_id, candidate_id)


def redeliver_job() -> str:
    """Queue again the pipeline jobs a broker lost (``groundwork.jobs.redelivery``)."""
    return summary(redeliver(_lost()))
