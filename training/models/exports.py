"""Training data exports: a job that writes one kind of training data for a behaviour version.

The data and its manifest are ``training.core.exports``'; the row holds where they went, their
hash (the dataset snapshot a plan names) and, when the policy refused, the reason in words.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from groundwork.models import Job

from .behaviours import Behaviour, BehaviourVersion


class TrainingExport(Job):
    class Kind(models.TextChoices):
        SFT = "sft", "SFT (TRL conversations)"
        OPENAI = "openai", "OpenAI chat fine-tuning"
        DPO = "dpo", "DPO (preference pairs)"
        KTO = "kto", "KTO (unpaired labels)"
        RFT = "rft", "RFT / GRPO (task prompts)"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        REFUSED = "refused"  # the policy said no (no eval, a held-out task, a secret): see why
        FAILED = "failed"

    FINISHED = (Status.DONE, Status.REFUSED, Status.FAILED)
    WAITING = Q(status=Status.QUEUED)
    RUNNING = Q(status=Status.RUNNING)

    behaviour = models.ForeignKey(Behaviour, on_delete=models.CASCADE, related_name="exports")
    version = models.ForeignKey(BehaviourVersion, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind)
    # BehaviourTask ids to take; empty: every task of the train split.
    task_ids = models.JSONField(default=list, blank=True)
    out_dir = models.TextField()
    status = models.CharField(max_length=10, choices=Status, default=Status.QUEUED, db_index=True)
    rows = models.PositiveIntegerField(default=0)
    manifest = models.JSONField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, help_text="Of manifest.json.")
    refusal_code = models.CharField(max_length=30, blank=True)
    refusal = models.TextField(blank=True)

    class Meta:
        ordering = ["-id"]
        permissions = [("export_training", "Can write training data exports")]

    def __str__(self) -> str:
        return f"training export {self.pk} ({self.kind}, {self.status})"
