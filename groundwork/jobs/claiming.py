"""How every job takes its row: one conditional UPDATE, so two workers never both run it.

    claimed = claim(
        EvalRun.objects.filter(pk=run_id),
        waiting=Q(status="queued"),
        running=Q(status="running"),
        status="running", done=0,
    )

A row is free when it is waiting, or when it is running but its worker died. A row with a
``heartbeat`` field (``heartbeat``) is dead when its last beat is a few beats old;
one that has never beaten (or a row without the field) when it was started longer ago than the
job time limit of the queue that runs it: django-q2 stops a job at its timeout. The UPDATE stamps
``started`` (and the heartbeat) with now and sets the rest; it matches nothing when another
worker got there first. ``on_reclaim`` runs when the row taken was a dead worker's, before the
new attempt starts: the place to remove what that worker left behind (its containers).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from .heartbeat import dead_before
from .queue import DEFAULT, job_limit


def stale_before(queue: str = DEFAULT) -> datetime:
    """A job of ``queue`` started before this has outlived its time limit: its worker died."""
    return timezone.now() - timedelta(seconds=job_limit(queue))


def claim(
    rows: QuerySet[Any],
    *,
    waiting: Q,
    running: Q,
    started: str = "started_at",
    heartbeat: str | None = None,
    queue: str = DEFAULT,
    on_reclaim: Callable[[], None] | None = None,
    **update: Any,
) -> bool:
    """Take the row(s) of ``rows`` that are waiting, or running but stale; True if any."""
    now = timezone.now()
    stamps = {started: now, **({heartbeat: now} if heartbeat else {})}
    stale = running & dead(started, heartbeat, queue)
    if on_reclaim is None:
        return bool(rows.filter(waiting | stale).update(**stamps, **update))
    if rows.filter(waiting).update(**stamps, **update):
        return True
    if not rows.filter(stale).update(**stamps, **update):
        return False
    on_reclaim()
    return True


def dead(started: str, heartbeat: str | None = None, queue: str = DEFAULT) -> Q:
    """A running row whose worker died: silent for a few beats, or past the queue's limit."""
    timed_out = Q(**{f"{started}__lt": stale_before(queue)})
    if heartbeat is None:
        return timed_out
    return Q(**{f"{heartbeat}__lt": dead_before()}) | (Q(**{heartbeat: None}) & timed_out)
