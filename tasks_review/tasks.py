"""django-q2 jobs of the tasks_review app, and the only module here that enqueues.

Jobs take ids, call services, and queue what a service says comes next (``Next``); services
never enqueue. Docker work runs on the docker cluster, so a long trial matrix never delays a
replay: a run's job (it builds images), its verify lanes and candidate retries. Verification is
one job per candidate, in ``jobs`` lanes (each lane's job queues its next), so the q2 time limit
bounds one candidate's trial matrix, not a whole run.
"""

from __future__ import annotations

import logging
from functools import partial

from django.conf import settings
from django.db import transaction
from django_q.conf import Conf
from django_q.tasks import async_task

from tasks_review.models import DatasetExport, PipelineRun
from tasks_review.services.exports import dataset_export_execute
from tasks_review.services.pipeline import (
    Next,
    candidate_retry,
    pipeline_run_execute_queued,
    pipeline_verify_next,
)
from tasks_review.services.verification import dead_owner_containers_remove
from trajectories.tasks import default_cluster, unless_gone

log = logging.getLogger(__name__)


def _enqueue(func: str, *args: object, cluster: str, **options: object) -> None:
    # After commit: a worker that starts first must find the rows.
    transaction.on_commit(partial(async_task, func, *args, cluster=cluster, **options))


def _docker_cluster() -> str:
    return settings.Q_DOCKER_CLUSTER


def pipeline_run_enqueue(run_id: int) -> None:
    _enqueue(
        "tasks_review.tasks.pipeline_run_job", run_id, group="pipeline", cluster=_docker_cluster()
    )


def pipeline_run_job(run_id: int) -> str:
    return unless_gone(
        PipelineRun,
        run_id,
        lambda: _queue_next(run_id, pipeline_run_execute_queued(run_id=run_id)),
    )


def pipeline_verify_enqueue(run_id: int) -> None:
    """One more lane step of a run's verify stage: a job that verifies one candidate."""
    _enqueue(
        "tasks_review.tasks.pipeline_verify_job",
        run_id,
        group=f"verify-run-{run_id}",
        cluster=_docker_cluster(),
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
    _enqueue(
        "tasks_review.tasks.candidate_retry_job",
        run_id,
        candidate_id,
        group=f"verify-run-{run_id}",
        cluster=_docker_cluster(),
    )


def candidate_retry_job(run_id: int, candidate_id: int) -> str:
    # The run is the row that matters: a deleted candidate is simply not claimable.
    return unless_gone(
        PipelineRun,
        run_id,
        lambda: candidate_retry(run_id=run_id, candidate_id=candidate_id),
    )


def docker_worker_started(sender: object, proc_name: str, **_: object) -> None:
    """django-q2's ``post_spawn`` in a worker process: a docker worker first removes what dead
    workers of this host left on its engine (``dead_owner_containers_remove`` says why here)."""
    if Conf.CLUSTER_NAME != _docker_cluster():
        return
    report = dead_owner_containers_remove()
    if report is not None and report.containers:
        log.info("%s removed %d leftover containers", proc_name, len(report.containers))


def dataset_export_enqueue(export_id: int) -> None:
    _enqueue(
        "tasks_review.tasks.dataset_export_job",
        export_id,
        task_name=f"dataset-export-{export_id}",
        cluster=default_cluster(),
    )


def dataset_export_job(export_id: int) -> str:
    def export() -> str:
        done = dataset_export_execute(export_id=export_id)
        return "not claimed" if done is None else done.status

    return unless_gone(DatasetExport, export_id, export)
