"""Over Redis, which hands each job out once, rows a killed worker left are finished by the sweep
a live worker's scheduler runs: nothing is in the broker for them any more."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail
from tests.trajectories.factories import make_trajectory
from training.models import EvalRun
from training.services.evals import eval_run_create
from trajectories.models import Trajectory

from .conftest import HEARTBEAT_SECONDS, wait_for

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]


def test_rows_left_running_by_a_killed_worker_are_finished_by_the_sweep_over_redis(workers, people):
    long_ago = timezone.now() - timedelta(seconds=int(settings.Q_CLUSTER["timeout"]) + 60)
    replay = make_trajectory(status=Trajectory.Status.REPLAYING, replay_started_at=long_ago)
    behaviour = behaviour_with(train=1, held_out=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    run = eval_run_create(user=None, behaviour_id=behaviour.pk)
    silent = timezone.now() - timedelta(seconds=10 * HEARTBEAT_SECONDS)
    EvalRun.objects.filter(pk=run.pk).update(
        status=EvalRun.Status.RUNNING, started_at=silent, heartbeat_at=silent
    )

    worker = workers("sweeper", cluster=settings.Q_CLUSTER["name"])
    wait_for(
        "the sweep to queue the lost jobs again and a worker to finish them",
        lambda: (
            Trajectory.objects.filter(pk=replay.pk, status="replayed").exists()
            and EvalRun.objects.filter(pk=run.pk, status="done").exists()
        ),
        timeout=150,
    )
    log = worker.output()
    assert "Processed 'trajectories.tasks.redeliver_job'" in log
    assert "Processed 'training.tasks.redeliver_job'" in log
