"""Training plans: what to train on which dataset snapshot, with which adapter, behind which gate
and budget. The inputs are stored; the markdown and the TRL config are rendered from them by
``training.core.plans``, which also validates them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .behaviours import Behaviour, BehaviourVersion
from .exports import TrainingExport


class TrainingPlan(models.Model):
    class Method(models.TextChoices):
        SFT = "sft", "SFT"
        DPO = "dpo", "DPO"
        KTO = "kto", "KTO"
        GRPO = "grpo", "RFT / GRPO"

    class Adapter(models.TextChoices):
        LORA = "lora", "LoRA"
        QLORA = "qlora", "QLoRA (4-bit NF4, double quantisation)"

    behaviour = models.ForeignKey(Behaviour, on_delete=models.CASCADE, related_name="plans")
    version = models.ForeignKey(BehaviourVersion, on_delete=models.PROTECT, related_name="+")
    method = models.CharField(max_length=10, choices=Method)
    export = models.ForeignKey(TrainingExport, on_delete=models.PROTECT, related_name="plans")
    export_sha256 = models.CharField(max_length=64)
    base_model = models.CharField(max_length=200)
    adapter = models.CharField(max_length=10, choices=Adapter, default=Adapter.LORA)
    lora_rank = models.PositiveIntegerField(default=16)
    lora_alpha = models.PositiveIntegerField(default=32)
    lora_dropout = models.FloatField(default=0.05)
    target_modules = models.JSONField(default=list)
    compute_dtype = models.CharField(max_length=10, default="bfloat16")
    held_out_task_ids = models.JSONField(default=list)
    min_pass_rate = models.FloatField(default=0.8)
    max_regression = models.FloatField(default=0.0)
    gpu_hours = models.FloatField()
    money = models.FloatField()
    currency = models.CharField(max_length=3, default="USD")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        permissions = [("plan_training", "Can write training plans")]

    def __str__(self) -> str:
        return f"training plan {self.pk} ({self.behaviour_id}, {self.method})"
