"""Jobs the broker lost, queued again: a bounded sweep every few minutes.

django-q2's ORM broker hands a job its worker never acknowledged to another worker after
``retry`` seconds; its Redis broker hands each job out once. A worker killed mid-job (out of
memory, a host going down) then leaves its row ``running`` with no job left anywhere to take it
over, and a job popped by a worker that died before claiming leaves its row ``queued`` for ever.
Each app's ``redeliver_job`` (a django-q2 schedule, ``schedule_redelivery``) looks for such rows
(``Lost``) and queues their job again through the app's own enqueue function. The job's claim
(``claiming.claim``) takes the row over and removes what the dead worker left; a job delivered
twice finds nothing to claim and does nothing, so queueing again is always safe.

Bounded two ways: at most ``limit`` rows of each kind per sweep, and each row at most once per
its queue's job time limit (a mark in the shared cache), so a row waiting behind a long queue is
not queued again at every sweep.

    lost = Lost(
        "eval runs", EvalRun.objects.all(), enqueue=eval_run_enqueue,
        waiting=Q(status="queued"), running=Q(status="running"), heartbeat="heartbeat_at",
    )
    redeliver([lost])  # {"eval runs": [ids queued again]}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q, QuerySet

from .claiming import dead, stale_before
from .queue import DEFAULT, job_limit

SCHEDULE_PREFIX = "traj2env-redeliver-"


@dataclass(frozen=True)
class Lost:
    """One kind of row whose job may be lost: running under a dead worker (``running``, by its
    ``started`` and ``heartbeat`` fields), waiting for longer than its queue's job time limit
    (``waiting``, since ``queued``), or matching ``orphaned``, a rule of its own."""

    name: str
    rows: QuerySet[Any]
    enqueue: Callable[[list[int]], object]  # queues the job(s) of these rows again
    waiting: Q | None = None
    running: Q | None = None
    orphaned: Q | None = None
    started: str = "started_at"
    heartbeat: str | None = None
    queue: str = DEFAULT
    queued: str = "created_at"

    def lost(self) -> QuerySet[Any]:
        rule = Q(pk__in=[])
        if self.waiting is not None:
            rule |= self.waiting & Q(**{f"{self.queued}__lt": stale_before(self.queue)})
        if self.running is not None:
            rule |= self.running & dead(self.started, self.heartbeat, self.queue)
        if self.orphaned is not None:
            rule |= self.orphaned
        return self.rows.filter(rule).order_by("pk")


def each(enqueue: Callable[[int], None]) -> Callable[[list[int]], None]:
    """An enqueue of one row's job, for a list of rows."""

    def enqueue_all(ids: list[int]) -> None:
        for pk in ids:
            enqueue(pk)

    return enqueue_all


def redeliver(kinds: Iterable[Lost], *, limit: int | None = None) -> dict[str, list[int]]:
    """Queue again the jobs of each kind's lost rows; the ids queued, by kind."""
    limit = limit if limit is not None else int(settings.TRAJ2ENV["REDELIVER_LIMIT"])
    queued: dict[str, list[int]] = {}
    for kind in kinds:
        fresh = _unmarked(kind, limit)
        if fresh:
            kind.enqueue(fresh)
        queued[kind.name] = fresh
    return queued


def _unmarked(kind: Lost, limit: int) -> list[int]:
    """Up to ``limit`` of the kind's lost rows not queued again lately, each marked now; pages
    through the marked ones, so rows queued again earlier never hide the rest."""
    label = kind.rows.model._meta.label_lower
    ttl = job_limit(kind.queue)  # a row queued again is left alone for its queue's limit
    fresh: list[int] = []
    after = None
    while len(fresh) < limit:
        rows = kind.lost() if after is None else kind.lost().filter(pk__gt=after)
        page = list(rows.values_list("pk", flat=True)[:limit])
        if not page:
            break
        after = page[-1]
        for pk in page:
            if len(fresh) < limit and cache.add(f"{SCHEDULE_PREFIX}{label}:{pk}", 1, timeout=ttl):
                fresh.append(pk)
    return fresh


def summary(queued: dict[str, list[int]]) -> str:
    """One line for the job's result: what was queued again, or that nothing was lost."""
    parts = [
        f"{len(ids)} {name} ({', '.join(map(str, ids))})" for name, ids in queued.items() if ids
    ]
    return "queued again: " + "; ".join(parts) if parts else "nothing lost"


def schedule_redelivery(func: str, app: str) -> None:
    """The django-q2 schedule that runs ``func`` (an app's ``redeliver_job``) every
    ``TRAJ2ENV_REDELIVER_MINUTES`` on the default cluster; made or updated at migrate."""
    from django_q.models import Schedule

    minutes = int(settings.TRAJ2ENV["REDELIVER_MINUTES"])
    Schedule.objects.update_or_create(
        name=f"{SCHEDULE_PREFIX}{app}",
        defaults={
            "func": func,
            "schedule_type": Schedule.MINUTES,
            "minutes": minutes,
            "repeats": -1,
            "cluster": settings.Q_CLUSTER["name"],
        },
    )


def on_migrate(func: str, app: str) -> Callable[..., None]:
    """A ``post_migrate`` receiver that keeps the app's schedule."""

    def receiver(**_: object) -> None:
        schedule_redelivery(func, app)

    return receiver
