"""django-q2 jobs of the trajectories app, and the only module here that enqueues.

Enqueue functions queue after commit, on a named cluster (``groundwork.jobs.queue``); jobs take
ids, call services, and tolerate rows deleted meanwhile (``unless_gone``) rather than raise into
django-q2's retries.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q

from groundwork.jobs.queue import enqueue_on_commit, unless_gone
from groundwork.jobs.redelivery import Lost, redeliver, summary

from .models import Trajectory
from .services.replay import replay_compute


def replays_enqueue(trajectory_ids: Iterable[int]) -> None:
    for trajectory_id in trajectory_ids:
        enqueue_on_commit("trajectories.tasks.replay_job", trajectory_id, group="replay")


def replay_job(trajectory_id: int) -> str:
    return unless_gone(Trajectory, trajectory_id, lambda: _replay(trajectory_id))


def _replay(trajectory_id: int) -> str:
    replay = replay_compute(trajectory_id=trajectory_id)
    return "replayed" if replay is not None else "not replayed (taken, gone or failed)"


def _lost() -> list[Lost]:
    S = Trajectory.Status
    return [
        Lost(
            "replays",
            Trajectory.objects.all(),
            enqueue=replays_enqueue,
            waiting=Q(status=S.INGESTED),
            running=Q(status=S.REPLAYING),
            started="replay_started_at",
        ),
    ]


def redeliver_job() -> str:
    """Queue again the replays a broker lost (``groundwork.jobs.redelivery``)."""
    return summary(redeliver(_lost()))
