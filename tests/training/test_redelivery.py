"""The training floor's lost jobs are queued again: an eval run left running by a dead worker is
scored to the end, a training export too; imports, authored-task checks and gradings are queued on
their own queues; live rows are left alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from tests.tasks_review.factories import make_candidate
from tests.training.factories import make_rollout, repaired
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail
from training import tasks
from training.models import AuthoredTask, EvalRun, RolloutImport, TrainingExport
from training.services.evals import eval_run_create
from training.services.exports import training_export_create

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_marks():
    from django.core.cache import cache

    cache.clear()


def dead_heartbeat():
    return timezone.now() - timedelta(seconds=5 * float(settings.TRAJ2ENV["HEARTBEAT_SECONDS"]))


def orphan(row, status: str) -> None:
    """Leave ``row`` as a SIGKILLed worker does: running, its heartbeat silent."""
    type(row).objects.filter(pk=row.pk).update(
        status=status, started_at=dead_heartbeat(), heartbeat_at=dead_heartbeat()
    )


@pytest.fixture
def behaviour(people):
    behaviour = behaviour_with(train=1, held_out=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    return behaviour


def test_an_eval_run_and_an_export_left_by_a_dead_worker_are_run_to_the_end(
    behaviour, tmp_path, q_sync, django_capture_on_commit_callbacks
):
    evaluated(behaviour)
    run = eval_run_create(user=None, behaviour_id=behaviour.pk)
    export = training_export_create(
        user=None, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "sft"
    )
    orphan(run, EvalRun.Status.RUNNING)
    orphan(export, TrainingExport.Status.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        result = tasks.redeliver_job()
    assert f"1 eval runs ({run.pk})" in result and f"1 training exports ({export.pk})" in result
    run.refresh_from_db()
    export.refresh_from_db()
    assert run.status == EvalRun.Status.DONE, run.error
    assert export.status == TrainingExport.Status.DONE, export.error or export.refusal
    assert (tmp_path / "sft" / "manifest.json").is_file()


def test_imports_authored_task_checks_and_gradings_are_queued_again_on_their_queues(
    tmp_path, django_capture_on_commit_callbacks
):
    candidate = make_candidate(trials=False)
    grading = make_rollout(candidate, repaired(), grade="grading", reward=None)
    grading.grade_started_at = grading.heartbeat_at = dead_heartbeat()
    grading.save()
    imported = RolloutImport.objects.create(path=str(tmp_path))
    orphan(imported, RolloutImport.Status.RUNNING)
    authored = AuthoredTask.objects.create(name="authored", path=str(tmp_path))
    orphan(authored, AuthoredTask.Status.VERIFYING)
    with django_capture_on_commit_callbacks() as callbacks:
        tasks.redeliver_job()
    jobs = sorted((c.args, c.keywords["cluster"]) for c in callbacks)
    default, docker = settings.Q_CLUSTER["name"], settings.Q_DOCKER_CLUSTER
    assert jobs == sorted(
        [
            (("training.tasks.rollout_import_job", imported.pk), default),
            (("training.tasks.authored_task_job", authored.pk), docker),
            (("training.tasks.regrade_job", candidate.pk, [grading.pk]), docker),
        ]
    )


def test_live_training_rows_are_left_alone(behaviour, django_capture_on_commit_callbacks):
    run = eval_run_create(user=None, behaviour_id=behaviour.pk)
    EvalRun.objects.filter(pk=run.pk).update(
        status=EvalRun.Status.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    with django_capture_on_commit_callbacks() as callbacks:
        assert tasks.redeliver_job() == "nothing lost"
    assert callbacks == []
