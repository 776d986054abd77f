"""Authored tasks: a Harbor task folder a user wrote, imported, verified by the trial matrix
and, when kept, a kept task (a ``Candidate`` of family ``Candidate.AUTHORED``, reached through
``AuthoredTask.candidate``) like any mined one.

The row is the import job and its evidence; the candidate it makes when kept is what
behaviours, rollouts, re-grading, exports and the held-out gate use, so none of them needs
to know where a task came from.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from groundwork.jobs import DOCKER
from groundwork.models import Job
from tasks_review.models import Candidate

from .behaviours import Behaviour


class AuthoredTask(Job):
    class Status(models.TextChoices):
        QUEUED = "queued"
        VERIFYING = "verifying"
        KEPT = "kept"
        # A graded trial scored off what it must, or the folder cannot run on this engine.
        REJECTED = "rejected"
        # Docker failed under some trial: no verdict yet, to verify again.
        UNGRADED = "ungraded"

    FINISHED = (Status.KEPT, Status.REJECTED, Status.UNGRADED)
    WAITING = Q(status=Status.QUEUED)
    RUNNING = Q(status=Status.VERIFYING)
    QUEUE = DOCKER

    path = models.TextField(help_text="The folder as the user named it.")
    task_dir = models.TextField(help_text="The copy that was verified (the store's, by content).")
    digest = models.CharField(max_length=80, db_index=True, help_text="Harbor's content hash.")
    name = models.CharField(max_length=200)
    behaviour = models.ForeignKey(
        Behaviour, null=True, blank=True, on_delete=models.SET_NULL, related_name="authored_tasks"
    )
    candidate = models.OneToOneField(
        Candidate, null=True, blank=True, on_delete=models.PROTECT, related_name="authored_task"
    )
    status = models.CharField(max_length=10, choices=Status, default=Status.QUEUED, db_index=True)
    reasons = models.JSONField(default=list, blank=True, help_text="Why it is not kept.")
    # training.core.authored.AuthoredResult.to_dict(): every trial with its reward and logs.
    evidence = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-id"]
        permissions = [
            ("import_authored_task", "Can import authored tasks and verify them in Docker"),
        ]

    def __str__(self) -> str:
        return f"authored task {self.pk}: {self.name} ({self.status})"
