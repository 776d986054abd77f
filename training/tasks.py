"""django-q2 jobs of the training app, and the only module here that enqueues.

Jobs take ids, call services and queue what comes next; services never enqueue. Grading
rollouts and verifying authored tasks is Docker work and runs on the docker cluster; reading a
jobs folder, scoring an eval run and writing a training export are light and run on the
default one.
"""

from __future__ import annotations

from groundwork.jobs.queue import DOCKER, enqueue_on_commit, unless_gone
from groundwork.jobs.redelivery import Lost, each, redeliver, summary
from tasks_review.models import Candidate

from .models import AuthoredTask, EvalRun, Rollout, RolloutImport, TrainingExport
from .services.authored import authored_task_verify
from .services.evals import eval_run_execute
from .services.exports import training_export_execute
from .services.rollouts import rollout_import_execute, rollouts_pending_by_task, rollouts_regrade


def rollout_import_enqueue(import_id: int) -> None:
    enqueue_on_commit(
        "training.tasks.rollout_import_job",
        import_id,
        group="rollouts",
    )


def rollout_import_job(import_id: int) -> str:
    def read() -> str:
        row = rollout_import_execute(import_id=import_id)
        if row is None:
            return "not claimed"
        regrade_enqueue(row.summary.get("rollouts") or [])
        return f"{row.status}: {len(row.summary.get('rollouts') or [])} rollouts"

    return unless_gone(RolloutImport, import_id, read)


def regrade_enqueue(rollout_ids: list[int] | None = None) -> int:
    """One grading job per kept task with pending rollouts (a task's image is prepared once)."""
    groups = rollouts_pending_by_task(rollout_ids)
    for candidate_id, ids in groups.items():
        enqueue_on_commit(
            "training.tasks.regrade_job",
            candidate_id,
            ids,
            group="regrade",
            queue=DOCKER,
        )
    return len(groups)


def regrade_job(candidate_id: int, rollout_ids: list[int]) -> str:
    def grade() -> str:
        counts = rollouts_regrade(candidate_id=candidate_id, rollout_ids=rollout_ids)
        return ", ".join(f"{k} {v}" for k, v in counts.items())

    return unless_gone(Candidate, candidate_id, grade)


def eval_run_enqueue(run_id: int) -> None:
    enqueue_on_commit("training.tasks.eval_run_job", run_id, group="eval")


def eval_run_job(run_id: int) -> str:
    def score() -> str:
        run = eval_run_execute(run_id=run_id)
        return "not claimed" if run is None else run.status

    return unless_gone(EvalRun, run_id, score)


def training_export_enqueue(export_id: int) -> None:
    enqueue_on_commit(
        "training.tasks.training_export_job",
        export_id,
        group="training-export",
    )


def training_export_job(export_id: int) -> str:
    def write() -> str:
        export = training_export_execute(export_id=export_id)
        return "not claimed" if export is None else export.status

    return unless_gone(TrainingExport, export_id, write)


def authored_task_enqueue(task_id: int) -> None:
    enqueue_on_commit(
        "training.tasks.authored_task_job",
        task_id,
        group="authored",
        queue=DOCKER,
    )


def authored_task_job(task_id: int) -> str:
    def verify() -> str:
        row = authored_task_verify(task_id=task_id)
        return "not claimed" if row is None else row.status

    return unless_gone(AuthoredTask, task_id, verify)


def _lost() -> list[Lost]:
    return [
        RolloutImport.lost("rollout imports", enqueue=each(rollout_import_enqueue)),
        EvalRun.lost("eval runs", enqueue=each(eval_run_enqueue)),
        TrainingExport.lost("training exports", enqueue=each(training_export_enqueue)),
        AuthoredTask.lost("authored tasks", enqueue=each(authored_task_enqueue)),
        Rollout.lost("rollout gradings", enqueue=regrade_enqueue),
    ]


def redeliver_job() -> str:
    """Queue again the training jobs a broker lost (``groundwork.jobs.redelivery``)."""
    return summary(redeliver(_lost()))
