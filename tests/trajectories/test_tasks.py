"""The replay job: the default cluster's queue, and a trajectory deleted before it runs."""

from __future__ import annotations

import pytest
from django_q.models import OrmQ

from tests.trajectories.factories import make_trajectory
from trajectories import tasks
from trajectories.models import Trajectory

pytestmark = pytest.mark.django_db


def test_replays_land_on_the_default_clusters_queue(django_capture_on_commit_callbacks):
    first, second = make_trajectory(), make_trajectory()
    with django_capture_on_commit_callbacks(execute=True):
        tasks.replays_enqueue([first.id, second.id])
    rows = OrmQ.objects.order_by("id")
    assert [(row.key, row.task["func"], row.task["args"]) for row in rows] == [
        ("traj2env", "trajectories.tasks.replay_job", (first.id,)),
        ("traj2env", "trajectories.tasks.replay_job", (second.id,)),
    ]


def test_a_replay_job_replays_its_trajectory():
    trajectory = make_trajectory()
    assert tasks.replay_job(trajectory.id) == "replayed"
    trajectory.refresh_from_db()
    assert trajectory.status == Trajectory.Status.REPLAYED


def test_a_replay_job_whose_trajectory_is_gone_says_so():
    trajectory = make_trajectory()
    trajectory.delete()
    assert tasks.replay_job(trajectory.id) == f"trajectory {trajectory.id} is gone"


def test_a_replay_job_whose_trajectory_is_deleted_while_it_runs_says_so(monkeypatch):
    trajectory = make_trajectory()

    def deleted_meanwhile(*, trajectory_id):
        Trajectory.objects.filter(id=trajectory_id).delete()
        raise Trajectory.DoesNotExist("Trajectory matching query does not exist.")

    monkeypatch.setattr(tasks, "replay_compute", deleted_meanwhile)
    result = tasks.replay_job(trajectory.id)
    assert result == f"trajectory {trajectory.id} was deleted while its job ran"
