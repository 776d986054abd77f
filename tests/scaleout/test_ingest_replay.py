"""Ingest into PostgreSQL, and replays run by a worker process that takes them from Redis."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.conftest import SAMPLES
from trajectories.models import Replay, Trajectory
from trajectories.tasks import replays_enqueue

from .conftest import wait_for

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]


def ingest(*paths: str) -> dict:
    out = io.StringIO()
    call_command("ingest", *paths, "--json", stdout=out)  # queues the replays, through Redis
    return json.loads(out.getvalue())


def test_sessions_ingested_into_postgresql_are_replayed_by_a_worker_over_redis(
    workers, people, client, settings
):
    first = ingest(str(SAMPLES))
    formats = first["by_format"]
    assert first["ingested"] == 4 and first["failed"] == [], first
    assert {"atif", "claude-code", "codex", "pi"} <= set(formats)
    assert Trajectory.objects.count() == first["ingested"]

    worker = workers("replays", cluster=settings.Q_CLUSTER["name"])
    replayed = Trajectory.Status.REPLAYED
    wait_for(
        "every trajectory to be replayed by the worker",
        lambda: not Trajectory.objects.exclude(status=replayed).exists(),
        timeout=120,
    )
    assert Replay.objects.count() == Trajectory.objects.count()

    # The same files again add nothing; a replay delivered twice replays nothing twice.
    again = ingest(str(SAMPLES))
    assert again["ingested"] == 0 and again["duplicates"] == first["ingested"]
    replays_enqueue(list(Trajectory.objects.values_list("id", flat=True)))
    done = "Processed 'trajectories.tasks.replay_job'"
    wait_for(
        "the second deliveries to be taken",
        lambda: worker.output().count(done) == 2 * Trajectory.objects.count(),
        timeout=60,
    )
    assert Replay.objects.count() == Trajectory.objects.count()

    # The stepper reads the stored replay: the files of the last step, highlighted.
    client.force_login(people.alice)
    t = Trajectory.objects.order_by("id").first()
    body = client.get(reverse("trajectories:step", args=[t.pk, t.steps_count - 1])).content
    assert b'id="file-tree"' in body and b"tree-row" in body
