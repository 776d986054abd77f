"""Replay a stored trajectory once: its file states in chunks, its commands and its checks."""

from __future__ import annotations

import json
import logging
import time

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from groundwork.core.failures import said
from groundwork.jobs.claiming import claim

from ..core import replay as core_replay
from ..models import Command, Replay, ReplayChunk, Step, Trajectory
from ..selectors import replay_inputs
from ..store import DbBlobs

log = logging.getLogger(__name__)


def _claim_replay(trajectory_id: int) -> bool:
    S = Trajectory.Status
    return claim(
        Trajectory.objects.filter(id=trajectory_id),
        waiting=Q(status=S.INGESTED),
        running=Q(status=S.REPLAYING),
        started="replay_started_at",
        status=S.REPLAYING,
        replay_error="",
    )


def replay_compute(*, trajectory_id: int) -> Replay | None:
    """Replay a trajectory once and store its file states, commands and checks.

    Returns None when the row is gone or another worker holds it. A replay that raises is
    recorded as failed on the row: the same input would fail the same way on a retry.
    """
    if not _claim_replay(trajectory_id):
        return None
    trajectory = Trajectory.objects.select_related("atif", "side_data").get(id=trajectory_id)
    started = time.perf_counter()
    try:
        blobs = DbBlobs()
        result = replay_inputs(trajectory).replay(blobs)
        blobs.flush()
        index = core_replay.StateIndex.build(
            result, every=settings.TRAJ2ENV["REPLAY_CHECKPOINT_EVERY"]
        )
        with transaction.atomic():
            replay = _replay_store(trajectory, result, index, started)
            Trajectory.objects.filter(id=trajectory_id).update(status=Trajectory.Status.REPLAYED)
    except Exception as exc:
        log.exception("replay of trajectory %s failed", trajectory_id)
        Trajectory.objects.filter(id=trajectory_id).update(
            status=Trajectory.Status.REPLAY_FAILED,
            replay_error=said(exc)[:2000],
        )
        return None
    return replay


def _replay_store(trajectory: Trajectory, result, index, started: float) -> Replay:
    summary = result.summary()
    Replay.objects.filter(trajectory=trajectory).delete()
    Command.objects.filter(trajectory=trajectory).delete()
    chunks = [
        ReplayChunk(number=n, checkpoint=dict(index.checkpoints[n]), deltas=index.block(n))
        for n in range(len(index.checkpoints))
    ]
    stored = sum(len(json.dumps(c.checkpoint)) + len(json.dumps(c.deltas)) for c in chunks)
    replay = Replay.objects.create(
        trajectory=trajectory,
        root=result.root or "",
        every=index.every,
        events=index.n_events,
        files_known=summary["files_known"],
        files_lost=summary["files_lost"],
        files_partial=summary["files_partial"],
        uncertain_trees=summary["uncertain_trees"],
        commands_count=summary["commands"],
        checks=summary["checks"],
        stored_bytes=stored,
        duration_ms=int((time.perf_counter() - started) * 1000),
    )
    for chunk in chunks:
        chunk.replay = replay
    ReplayChunk.objects.bulk_create(chunks, batch_size=200)
    Command.objects.bulk_create(
        (
            Command(
                trajectory=trajectory,
                index=c.index,
                step_index=c.step_index,
                event_index=c.event_index,
                tool_call_id=c.tool_call_id[:200],
                command=c.command,
                cwd=c.cwd or "",
                output=c.output,
                exit_code=c.exit_code,
                check_kind=str(c.check.kind) if c.check else "",
                check_language=(c.check.language or "") if c.check else "",
                check_runner=c.check.runner if c.check else "",
                check_masked=bool(c.check and c.check.masked),
            )
            for c in result.commands
        ),
        batch_size=500,
    )
    # One executemany instead of 20,000 ORM saves.
    q = connection.ops.quote_name
    sql = (
        f"UPDATE {q(Step._meta.db_table)} SET {q('events_start')} = %s, {q('events_end')} = %s "
        f"WHERE {q('trajectory_id')} = %s AND {q('index')} = %s"
    )
    with connection.cursor() as cursor:
        cursor.executemany(
            sql,
            [
                (index.step_events[i], index.step_events[i + 1], trajectory.id, i)
                for i in range(len(index.step_events) - 1)
            ],
        )
    return replay
