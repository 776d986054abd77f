"""django-q2 jobs. They take ids, claim their row, and tolerate rows deleted meanwhile."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from django.db import transaction
from django_q.tasks import async_task


def replays_enqueue(trajectory_ids: Iterable[int]) -> None:
    for trajectory_id in trajectory_ids:
        # after commit: a worker must never look for a row that is not visible yet
        transaction.on_commit(
            partial(async_task, "trajectories.tasks.replay_job", trajectory_id, group="replay")
        )


def replay_job(trajectory_id: int) -> str:
    from .services import replay_compute

    replay = replay_compute(trajectory_id=trajectory_id)
    return "replayed" if replay is not None else "not replayed (taken, gone or failed)"
