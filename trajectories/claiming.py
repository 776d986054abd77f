"""How every job takes its row: one conditional UPDATE, so two workers never both run it.

    claimed = claim(
        EvalRun.objects.filter(pk=run_id),
        waiting=Q(status="queued"),
        running=Q(status="running"),
        status="running", done=0,
    )

A row is free when it is waiting, or when it is running but was started longer ago than the
job time limit of the queue that runs it: django-q2 stops a job at its timeout, so such a row
belongs to a worker that died. The UPDATE stamps ``started`` with now and sets the rest; it
matches nothing when another worker got there first.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

DEFAULT = "default"
DOCKER = "docker"


def stale_before(queue: str = DEFAULT) -> datetime:
    """A job of ``queue`` started before this has outlived its time limit: its worker died."""
    if queue == DOCKER:
        timeout = settings.Q_CLUSTER["ALT_CLUSTERS"][settings.Q_DOCKER_CLUSTER]["timeout"]
    else:
        timeout = settings.Q_CLUSTER["timeout"]
    return timezone.now() - timedelta(seconds=int(timeout))


def claim(
    rows: QuerySet[Any],
    *,
    waiting: Q,
    running: Q,
    started: str = "started_at",
    queue: str = DEFAULT,
    **update: Any,
) -> bool:
    """Take the row(s) of ``rows`` that are waiting, or running but stale; True if any."""
    stale = running & Q(**{f"{started}__lt": stale_before(queue)})
    return bool(rows.filter(waiting | stale).update(**{started: timezone.now()}, **update))
