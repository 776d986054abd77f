"""Sandbox tasks: a user-authored Harbor task folder imported, verified by the trial matrix,
and, when kept, a kept task (a ``Candidate`` of family "sandbox") like any mined one.

The row is the import job and its evidence; the candidate it makes when kept is what
behaviours, rollouts, re-grading, exports and the held-out gate use, so none of them needs
to know where a task came from.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from tasks_review.models import Candidate

from .behaviours import Behaviour


class SandboxTask(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        VERIFYING = "verifying"
        KEPT = "kept"
        # A graded trial scored off what it must, or the folder cannot run on this engine.
        REJECTED = "rejected"
        # Docker failed under some trial: no verdict yet, to verify again.
        UNGRADED = "ungraded"

    FINISHED = (Status.KEPT, Status.REJECTED, Status.UNGRADED)

    path = models.TextField(help_text="The folder as the user named it.")
    task_dir = models.TextField(help_text="The copy that was verified (the store's, by content).")
    digest = models.CharField(max_length=80, db_index=True, help_text="Harbor's content hash.")
    name = models.CharField(max_length=200)
    behaviour = models.ForeignKey(
        Behaviour, null=True, blank=True, on_delete=models.SET_NULL, related_name="sandbox_tasks"
    )
    candidate = models.OneToOneField(
        Candidate, null=True, blank=True, on_delete=models.PROTECT, related_name="sandbox_task"
    )
    status = models.CharField(max_length=10, choices=Status, default=Status.QUEUED, db_index=True)
    reasons = models.JSONField(default=list, blank=True, help_text="Why it is not kept.")
    # training.core.sandbox.SandboxResult.to_dict(): every trial with its reward and logs.
    evidence = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Stamped every few seconds while a job runs it (groundwork.jobs.heartbeat).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        permissions = [
            ("import_sandbox_task", "Can import sandbox tasks and verify them in Docker"),
        ]

    def __str__(self) -> str:
        return f"sandbox task {self.pk}: {self.name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED
