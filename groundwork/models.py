"""The ground floor's rows: the audit trail every app writes to, and what a row a person can hold
(``Holdable``) carries."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


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
