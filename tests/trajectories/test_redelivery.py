"""Jobs a broker lost are queued again by a sweep: a replay left running by a dead worker, or one
waiting longer than its queue's limit, is replayed; live and recent rows are left alone; each row
is queued again at most once per limit, and at most a bounded number per sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_q.models import Schedule

from groundwork.jobs.redelivery import summary
from tests.trajectories.factories import make_trajectory
from trajectories import tasks
from trajectories.models import Trajectory

pytestmark = pytest.mark.django_db
S = Trajectory.Status


@pytest.fixture(autouse=True)
def _fresh_marks():
    from django.core.cache import cache

    cache.clear()


def ago(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


def sweep(callbacks_fixture, *, execute: bool) -> tuple[str, list]:
    with callbacks_fixture(execute=execute) as callbacks:
        result = tasks.redeliver_job()
    return result, callbacks


def queued_jobs(callbacks) -> list[tuple]:
    """What the sweep handed the broker: (function, *arguments) of each job."""
    return [c.args for c in callbacks]


def test_a_replay_left_running_by_a_dead_worker_is_queued_again_and_replayed(
    settings, q_sync, django_capture_on_commit_callbacks
):
    limit = int(settings.Q_CLUSTER["timeout"])
    orphan = make_trajectory(status=S.REPLAYING, replay_started_at=ago(limit + 60))
    result, _ = sweep(django_capture_on_commit_callbacks, execute=True)
    assert result == f"queued again: 1 replays ({orphan.pk})"
    orphan.refresh_from_db()
    assert orphan.status == S.REPLAYED and orphan.replay.pk is not None


def test_a_trajectory_waiting_for_its_replay_longer_than_the_limit_is_replayed(
    settings, q_sync, django_capture_on_commit_callbacks
):
    limit = int(settings.Q_CLUSTER["timeout"])
    waiting = make_trajectory(status=S.INGESTED)
    Trajectory.objects.filter(pk=waiting.pk).update(created_at=ago(limit + 1))
    sweep(django_capture_on_commit_callbacks, execute=True)
    waiting.refresh_from_db()
    assert waiting.status == S.REPLAYED


def test_live_recent_and_finished_rows_are_left_alone(settings, django_capture_on_commit_callbacks):
    limit = int(settings.Q_CLUSTER["timeout"])
    make_trajectory(status=S.REPLAYING, replay_started_at=ago(limit - 60))  # still within it
    make_trajectory(status=S.INGESTED)  # just ingested: its job is on its way
    make_trajectory(status=S.REPLAYED, replay_started_at=ago(limit + 60))
    make_trajectory(status=S.REPLAY_FAILED, replay_started_at=ago(limit + 60))
    result, callbacks = sweep(django_capture_on_commit_callbacks, execute=False)
    assert (result, callbacks) == ("nothing lost", [])


def test_a_row_queued_again_is_not_queued_again_within_its_limit(
    settings, django_capture_on_commit_callbacks
):
    limit = int(settings.Q_CLUSTER["timeout"])
    orphan = make_trajectory(status=S.REPLAYING, replay_started_at=ago(limit + 60))
    _, first = sweep(django_capture_on_commit_callbacks, execute=False)
    assert queued_jobs(first) == [("trajectories.tasks.replay_job", orphan.pk)]
    # The job waits behind a long queue; the next sweeps do not queue it a second time.
    result, second = sweep(django_capture_on_commit_callbacks, execute=False)
    assert (result, second) == ("nothing lost", [])


def test_a_sweep_queues_at_most_the_limit_of_rows_of_a_kind(
    settings, django_capture_on_commit_callbacks
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REDELIVER_LIMIT": 2}
    started = ago(int(settings.Q_CLUSTER["timeout"]) + 60)
    orphans = [make_trajectory(status=S.REPLAYING, replay_started_at=started) for _ in range(3)]
    _, first = sweep(django_capture_on_commit_callbacks, execute=False)
    assert [job[1] for job in queued_jobs(first)] == [t.pk for t in orphans[:2]]
    _, second = sweep(django_capture_on_commit_callbacks, execute=False)
    assert [job[1] for job in queued_jobs(second)] == [orphans[2].pk]


def test_the_summary_names_what_was_queued_again_by_kind():
    assert summary({"replays": [], "eval runs": []}) == "nothing lost"
    assert summary({"replays": [3, 4], "eval runs": [9]}) == (
        "queued again: 2 replays (3, 4); 1 eval runs (9)"
    )


def test_migrate_keeps_one_sweep_schedule_per_app_on_the_default_cluster(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REDELIVER_MINUTES": 5}
    call_command("migrate", verbosity=0)
    call_command("migrate", verbosity=0)  # again: updated, not doubled
    schedules = Schedule.objects.filter(name__startswith="traj2env-redeliver-").order_by("name")
    assert [(s.name, s.func) for s in schedules] == [
        ("traj2env-redeliver-tasks_review", "tasks_review.tasks.redeliver_job"),
        ("traj2env-redeliver-training", "training.tasks.redeliver_job"),
        ("traj2env-redeliver-trajectories", "trajectories.tasks.redeliver_job"),
    ]
    for schedule in schedules:
        assert (schedule.schedule_type, schedule.minutes, schedule.repeats) == ("I", 5, -1)
        assert schedule.cluster == settings.Q_CLUSTER["name"]
