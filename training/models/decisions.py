"""What a team decided to do about a behaviour: one row per decision, kept as history."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .behaviours import Behaviour, BehaviourVersion


class Decision(models.Model):
    """Prompt, script, train (with its method and adapter) or leave to human review, with the
    rationale and the eval runs that were the evidence when it was made. Never edited: a new
    decision is a new row, and the latest one stands."""

    class Kind(models.TextChoices):
        PROMPT = "prompt", "Prompt"
        SCRIPT = "script", "Script or hook"
        TRAIN = "train", "Train"
        HUMAN_REVIEW = "human_review", "Human review"

    class Method(models.TextChoices):
        SFT = "sft", "SFT"
        DPO = "dpo", "DPO"
        KTO = "kto", "KTO"
        RFT = "rft", "RFT / GRPO"

    class Adapter(models.TextChoices):
        LORA = "lora", "LoRA"
        QLORA = "qlora", "QLoRA"

    behaviour = models.ForeignKey(Behaviour, on_delete=models.CASCADE, related_name="decisions")
    version = models.ForeignKey(BehaviourVersion, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=20, choices=Kind)
    method = models.CharField(max_length=10, choices=Method, blank=True)
    adapter = models.CharField(max_length=10, choices=Adapter, blank=True)
    rationale = models.TextField()
    evidence = models.JSONField(default=list, help_text="Ids of the finished eval runs.")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        permissions = [("decide_behaviour", "Can record what to do about a behaviour")]

    def __str__(self) -> str:
        return f"{self.behaviour_id}: {self.kind} ({self.pk})"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("a decision is history; record a new one instead")
        super().save(*args, **kwargs)

    @property
    def summary(self) -> str:
        """The decision in a few words: "Train: DPO with QLoRA"."""
        if self.kind != self.Kind.TRAIN:
            return self.get_kind_display()
        return f"Train: {self.get_method_display()} with {self.get_adapter_display()}"
