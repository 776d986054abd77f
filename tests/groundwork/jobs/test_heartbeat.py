"""A running job beats on its row from a background thread, and stops when the work ends."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from groundwork.jobs.heartbeat import Heartbeat
from trajectories.models import IngestRun
from trajectories.services.ingest import ingest_run_create, ingest_run_execute

S = IngestRun.Status


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_refreshes_the_row_while_the_block_runs_and_stops_on_exit():
    long_ago = timezone.now() - timedelta(hours=1)
    run = IngestRun.objects.create(paths=["x"], status=S.RUNNING, heartbeat_at=long_ago)
    rows = IngestRun.objects.filter(pk=run.pk)
    with Heartbeat(rows, every=0.05) as beat:
        deadline = time.monotonic() + 5
        while beat.beats < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    run.refresh_from_db()
    assert beat.beats >= 2 and run.heartbeat_at > long_ago
    assert not beat._thread.is_alive()
    last = run.heartbeat_at
    time.sleep(0.2)
    run.refresh_from_db()
    assert run.heartbeat_at == last  # no beat after the block


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_stops_when_the_work_raises():
    run = IngestRun.objects.create(paths=["x"], status=S.RUNNING)
    with (
        pytest.raises(RuntimeError),
        Heartbeat(IngestRun.objects.filter(pk=run.pk), every=60) as beat,
    ):
        raise RuntimeError("the work failed")
    assert not beat._thread.is_alive()


@pytest.mark.django_db
def test_a_later_ingest_marks_a_killed_cli_ingest_failed(tmp_path, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "HEARTBEAT_SECONDS": 30}
    silent = timezone.now() - timedelta(minutes=10)
    killed = IngestRun.objects.create(
        paths=["x"], status=S.RUNNING, started_at=silent, heartbeat_at=silent
    )
    alive = IngestRun.objects.create(
        paths=["y"], status=S.RUNNING, started_at=silent, heartbeat_at=timezone.now()
    )
    later = ingest_run_create(paths=[tmp_path])
    ingest_run_execute(run_id=later.id)
    killed.refresh_from_db()
    alive.refresh_from_db()
    assert killed.status == S.FAILED and "interrupted" in killed.error
    assert killed.finished_at is not None
    assert alive.status == S.RUNNING


@pytest.mark.django_db
def test_an_ingest_run_stamps_its_heartbeat_when_it_starts(tmp_path):
    run = ingest_run_create(paths=[tmp_path])
    ingest_run_execute(run_id=run.id)
    run.refresh_from_db()
    assert run.status == S.DONE and run.heartbeat_at is not None
