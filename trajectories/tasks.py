"""django-q2 jobs of the trajectories app, and the only module here that enqueues.

Enqueue functions queue after commit, on a named cluster; jobs take ids, call services, and
tolerate rows deleted meanwhile (``unless_gone``) rather than raise into django-q2's retries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from functools import partial

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q
from django_q.tasks import async_task

from groundwork.jobs.redelivery import Lost, redeliver, summary

from .models import Trajectory
from .services import replay_compute

log = logging.getLogger(__name__)


def default_cluster() -> str:
    """The queue of light work (replays, exports): the cluster named in Q_CLUSTER."""
    return settings.Q_CLUSTER["name"]


def unless_gone(model: type[models.Model], row_id: int, job: Callable[[], str]) -> str:
    """``job()``, or a line saying the job's row is gone when it was deleted before or while
    the job ran: retrying a job whose row is gone cannot succeed."""
    what = f"{model._meta.verbose_name} {row_id}"
    if not model._default_manager.filter(pk=row_id).exists():
        log.info("%s is gone; nothing to do", what)
        return f"{what} is gone"
    try:
        return job()
    except Exception:
        if model._default_manager.filter(pk=row_id).exists():
            raise
        log.warning("%s was deleted while its job ran", what, exc_info=True)
        return f"{what} was deleted while its job ran"


def replays_enqueue(trajectory_ids: Iterable[int]) -> None:
    for trajectory_id in trajectory_ids:
        # After commit: a worker must never look for a row that is not visible yet. The cluster
        # is named because a job enqueued from a worker would otherwise go to that worker's own.
        transaction.on_commit(
            partial(
                async_task,
                "trajectories.tasks.replay_job",
                trajectory_id,
                group="replay",
                cluster=default_cluster(),
            )
        )


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
