"""A job takes its row once: waiting, or running past its queue's time limit (a dead worker)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from groundwork.jobs.claiming import claim, stale_before
from groundwork.jobs.queue import DOCKER
from trajectories.models import IngestRun

pytestmark = pytest.mark.django_db

S = IngestRun.Status


def take(run: IngestRun, **options) -> bool:
    return claim(
        IngestRun.objects.filter(pk=run.pk),
        waiting=Q(status=S.QUEUED),
        running=Q(status=S.RUNNING),
        status=S.RUNNING,
        **options,
    )


def test_a_waiting_row_is_taken_once_and_stamped():
    run = IngestRun.objects.create(paths=["x"])
    assert take(run) is True
    run.refresh_from_db()
    assert run.status == S.RUNNING and run.started_at is not None
    assert take(run) is False


def test_a_running_row_is_taken_over_only_past_its_queues_time_limit(settings):
    settings.Q_CLUSTER = {
        **settings.Q_CLUSTER,
        "timeout": 60,
        "ALT_CLUSTERS": {settings.Q_DOCKER_CLUSTER: {"timeout": 600}},
    }
    fresh = timezone.now() - timedelta(seconds=30)
    old = timezone.now() - timedelta(seconds=120)
    live = IngestRun.objects.create(paths=["x"], status=S.RUNNING, started_at=fresh)
    dead = IngestRun.objects.create(paths=["x"], status=S.RUNNING, started_at=old)
    assert take(live) is False
    assert take(dead) is True
    # Docker work has the docker queue's (longer) limit: 120 s is not dead there yet.
    docker = IngestRun.objects.create(paths=["x"], status=S.RUNNING, started_at=old)
    assert take(docker, queue=DOCKER) is False
    assert stale_before(DOCKER) < stale_before()


def beating(seconds_ago: float, **fields) -> IngestRun:
    return IngestRun.objects.create(
        paths=["x"],
        status=S.RUNNING,
        started_at=timezone.now() - timedelta(seconds=seconds_ago),
        heartbeat_at=timezone.now() - timedelta(seconds=seconds_ago),
        **fields,
    )


def test_a_running_row_with_a_fresh_heartbeat_is_not_taken_one_silent_for_minutes_is(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "HEARTBEAT_SECONDS": 30}
    live, dead = beating(60), beating(150)  # 2 beats old; 5 beats old (4 make it dead)
    assert take(live, heartbeat="heartbeat_at") is False
    assert take(dead, heartbeat="heartbeat_at") is True
    dead.refresh_from_db()
    # Taken over within minutes, long before the 30-minute job limit; stamped for the new owner.
    assert timezone.now() - dead.heartbeat_at < timedelta(seconds=5)


def test_a_row_that_never_beat_falls_back_to_the_job_time_limit(settings):
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": 600}
    started = timezone.now() - timedelta(seconds=300)
    quiet = IngestRun.objects.create(paths=["x"], status=S.RUNNING, started_at=started)
    assert take(quiet, heartbeat="heartbeat_at") is False
    IngestRun.objects.filter(pk=quiet.pk).update(started_at=started - timedelta(seconds=600))
    assert take(quiet, heartbeat="heartbeat_at") is True


def test_on_reclaim_runs_only_when_a_dead_workers_row_is_taken():
    reclaimed: list[int] = []
    waiting = IngestRun.objects.create(paths=["x"])
    dead = beating(3600)
    live = beating(1)
    for run in (waiting, dead, live):
        take(run, heartbeat="heartbeat_at", on_reclaim=lambda run=run: reclaimed.append(run.pk))
    assert reclaimed == [dead.pk]
