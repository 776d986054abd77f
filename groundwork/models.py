"""The ground floor's rows: the audit trail every app writes to, and the abstract bases of the
apps' rows: a job's row (``Job``, or ``Beating`` for a row a job claims without owning it) and
a row a person can hold (``Holdable``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q, QuerySet

from groundwork.jobs import DEFAULT

if TYPE_CHECKING:
    from groundwork.jobs.redelivery import Lost


class AuditQuerySet(models.QuerySet):
    """The bulk paths that skip Model.save and Model.delete, refused as those are: an UPDATE or
    DELETE through the ORM would otherwise rewrite or erase history without a trace."""

    def update(self, **kwargs: Any) -> int:
        raise PermissionError("audit events are append-only")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise PermissionError("audit events are append-only")

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise PermissionError("audit events are append-only")


class AuditEvent(models.Model):
    """Append-only: who did what, when, with the state before and after."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    verb = models.CharField(max_length=40, db_index=True)
    target_type = models.CharField(max_length=40, db_index=True)
    target_id = models.CharField(max_length=40, db_index=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        # The review desk made the table; it is kept where it is, never moved (migration 0001).
        db_table = "tasks_review_auditevent"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["target_type", "target_id"], name="tasks_revie_target__4c4d1c_idx")
        ]

    def __str__(self) -> str:
        return f"{self.actor_id} {self.verb} {self.target_type}:{self.target_id}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("audit events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError("audit events are append-only")


class Holdable(models.Model):
    """A row a person can hold for a while, so nobody else works it meanwhile
    (``groundwork.services.holds``); an expired hold is free for the next person. The columns
    keep the names they were made with (``reserved_by_id``, ``reserved_until``)."""

    held_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_column="reserved_by_id",
    )
    held_until = models.DateTimeField(null=True, blank=True, db_column="reserved_until")

    class Meta:
        abstract = True


class Beating(models.Model):
    """A row a job claims and beats on while it runs (``groundwork.jobs``): one worker takes it
    at a time, and a row silent for a few beats belongs to a worker that died, which the next
    claim (or the redelivery sweep, ``lost``) takes over.

        if not EvalRun.claim(run_id, status=EvalRun.Status.RUNNING, done=0):
            return None  # another worker has it, or it is not waiting
        with Heartbeat(EvalRun.objects.filter(pk=run_id)):
            ...  # the work

    Each model says, in its own terms, which rows wait for a job (``WAITING``) and which a job
    is running (``RUNNING``), which field a claim stamps (``STARTED``) and which queue runs its
    job (``QUEUE``: a job that never beat is judged by that queue's time limit)."""

    # Stamped every few seconds while a job runs it (groundwork.jobs.heartbeat).
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    WAITING: ClassVar[Q]
    RUNNING: ClassVar[Q]
    STARTED: ClassVar[str] = "started_at"
    QUEUE: ClassVar[str] = DEFAULT

    class Meta:
        abstract = True

    @classmethod
    def claim(
        cls,
        pk: int,
        *,
        rows: QuerySet[Any] | None = None,
        on_reclaim: Callable[[], None] | None = None,
        **update: Any,
    ) -> bool:
        """Take row ``pk`` (of ``rows``, all by default) when it waits, or runs under a worker
        that died (``on_reclaim`` then removes what that worker left, first); set ``update``.
        False when another worker has it, or it is in no state to take."""
        from groundwork.jobs.claiming import claim

        return claim(
            (cls._default_manager.all() if rows is None else rows).filter(pk=pk),
            waiting=cls.WAITING,
            running=cls.RUNNING,
            started=cls.STARTED,
            heartbeat="heartbeat_at",
            queue=cls.QUEUE,
            on_reclaim=on_reclaim,
            **update,
        )

    @classmethod
    def stale(cls) -> Q:
        """Running under a worker that died: silent for a few beats, or past its queue's limit."""
        from groundwork.jobs.claiming import dead

        return cls.RUNNING & dead(cls.STARTED, "heartbeat_at", cls.QUEUE)

    @classmethod
    def lost(
        cls,
        name: str,
        *,
        enqueue: Callable[[list[int]], object],
        rows: QuerySet[Any] | None = None,
        **overrides: Any,
    ) -> Lost:
        """This model's rows whose job a broker lost, for the redelivery sweep: waiting longer
        than the queue's limit, or running under a dead worker (``overrides`` change either)."""
        from groundwork.jobs.redelivery import Lost

        rule: dict[str, Any] = {
            "waiting": cls.WAITING,
            "running": cls.RUNNING,
            "started": cls.STARTED,
            "heartbeat": "heartbeat_at",
            "queue": cls.QUEUE,
        }
        rows = cls._default_manager.all() if rows is None else rows
        return Lost(name, rows, enqueue=enqueue, **{**rule, **overrides})


class Job(Beating):
    """A job's own row: who asked for it and when, when it started and finished, and why it
    failed (``error``); ``FINISHED`` names the statuses it ends in."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    FINISHED: ClassVar[tuple[str, ...]]

    class Meta:
        abstract = True

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED  # type: ignore[attr-defined]


class PlainJob(Job):
    """A job whose row goes queued → running → done or failed, and has no other state: its
    statuses, what waits and what runs, said once for every such job."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    FINISHED = (Status.DONE, Status.FAILED)
    WAITING = Q(status=Status.QUEUED)
    RUNNING = Q(status=Status.RUNNING)

    status = models.CharField(max_length=10, choices=Status, default=Status.QUEUED, db_index=True)

    class Meta:
        abstract = True
