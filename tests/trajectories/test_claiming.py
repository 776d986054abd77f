"""A job takes its row once: waiting, or running past its queue's time limit (a dead worker)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from trajectories.claiming import DOCKER, claim, stale_before
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
