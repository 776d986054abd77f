"""Adapters, their deployments (rollout per behaviour, approvals, drills), daily usage and the API
clients serving infrastructure authenticates with.

The rules live in ``training.core.deploy``; these rows hold what the rules need between
requests. ``training.services.deploy`` turns a row into the core's ``Deployment``, calls one
transition and writes the result back with its audit event.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models

from training.core.deploy.adapters import AdapterVersion
from training.core.deploy.gate import GateThresholds
from training.core.deploy.states import State as CoreState

from .behaviours import Behaviour

# The held-out gate a proposal gets unless it says otherwise: five rollouts a side, half the
# held-out tasks passed, and no drop at all against the base agent.
DEFAULT_THRESHOLDS = GateThresholds(min_rollouts=5, min_pass_rate=0.5, tolerance=0.0)


class Adapter(models.Model):
    """One registered adapter version. Immutable: (name, version) names these weights forever."""

    behaviour = models.ForeignKey(Behaviour, on_delete=models.PROTECT, related_name="adapters")
    name = models.CharField(max_length=120)
    version = models.CharField(max_length=20)
    eval_suite = models.SlugField(max_length=80)
    base_model = models.CharField(max_length=200)
    # A reference to the plan as its author names it, until TrainingPlan rows exist to point at.
    training_plan = models.CharField(max_length=200)
    dataset_sha256 = models.CharField(max_length=64)
    artifact_uri = models.CharField(max_length=1000)
    artifact_sha256 = models.CharField(max_length=64)
    rank = models.PositiveIntegerField()
    # AdapterVersion.served_name, kept so the route reads it without rebuilding the version.
    served_name = models.CharField(max_length=140, unique=True)
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    registered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="one_adapter_per_version")
        ]
        permissions = [("register_adapter", "Can register adapter versions")]

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("an adapter version is immutable; register the next version")
        super().save(*args, **kwargs)

    def core(self) -> AdapterVersion:
        return AdapterVersion(
            name=self.name,
            version=self.version,
            behaviour=self.behaviour.slug,
            eval_suite=self.eval_suite,
            base_model=self.base_model,
            training_plan=self.training_plan,
            dataset_sha256=self.dataset_sha256,
            artifact_uri=self.artifact_uri,
            artifact_sha256=self.artifact_sha256,
            rank=self.rank,
            registrar=self.registered_by.get_username(),
        )

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


class Deployment(models.Model):
    """An adapter version put behind the gate, its approvals, drills, kill switch and budget."""

    class State(models.TextChoices):
        PROPOSED = CoreState.PROPOSED.value
        APPROVED = CoreState.APPROVED.value
        ACTIVE = CoreState.ACTIVE.value
        KILLED = CoreState.KILLED.value
        ROLLED_BACK = CoreState.ROLLED_BACK.value, "Rolled back"
        RETIRED = CoreState.RETIRED.value

    adapter = models.ForeignKey(Adapter, on_delete=models.PROTECT, related_name="deployments")
    state = models.CharField(max_length=12, choices=State, default=State.PROPOSED, db_index=True)
    reason = models.TextField(blank=True)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The held-out gate's thresholds, as proposed.
    min_rollouts = models.PositiveIntegerField(default=DEFAULT_THRESHOLDS.min_rollouts)
    min_pass_rate = models.DecimalField(
        max_digits=5, decimal_places=4, default=Decimal(str(DEFAULT_THRESHOLDS.min_pass_rate))
    )
    tolerance = models.DecimalField(
        max_digits=5, decimal_places=4, default=Decimal(str(DEFAULT_THRESHOLDS.tolerance))
    )
    # The budget cap per UTC day; both empty: no cap.
    tokens_per_day = models.PositiveBigIntegerField(null=True, blank=True)
    money_per_day = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    salt = models.CharField(
        max_length=64,
        blank=True,
        help_text="Bucketing salt; empty keeps "
        "the same subjects first from one version to the next.",
    )
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="supersedes"
    )
    # The latest kill-and-restore drill since the latest approval ...
    drill_started_at = models.DateTimeField(null=True, blank=True)
    drill_answered_at = models.DateTimeField(null=True, blank=True)
    drill_model = models.CharField(max_length=200, blank=True)
    drill_adapter = models.CharField(max_length=120, blank=True)  # "": the base model answered
    # ... and one in progress: the deployment is killed until it restores.
    pending_drill_at = models.DateTimeField(null=True, blank=True)
    pending_drill_resume = models.CharField(max_length=12, choices=State, blank=True)

    class Meta:
        ordering = ["-id"]
        permissions = [
            ("propose_deployment", "Can propose deployments of adapters"),
            ("approve_deployment", "Can approve deployments (never one's own)"),
            ("operate_deployment", "Can kill, roll back, activate, drill and retire deployments"),
            ("manage_api_clients", "Can create and revoke API clients"),
        ]

    def __str__(self) -> str:
        return f"deployment {self.pk} of {self.adapter_id} ({self.state})"

    def thresholds(self) -> GateThresholds:
        # str(): the gate reads thresholds as the decimals they were written as.
        return GateThresholds(
            min_rollouts=self.min_rollouts,
            min_pass_rate=float(str(self.min_pass_rate)),
            tolerance=float(str(self.tolerance)),
        )

    @property
    def has_budget(self) -> bool:
        return self.tokens_per_day is not None or self.money_per_day is not None


class DeploymentShare(models.Model):
    """A deployment's rollout for one behaviour, in basis points: as proposed, as the latest
    approval allows (the ceiling), and live. None: not part of that map. The route reads these
    rows by behaviour."""

    deployment = models.ForeignKey(Deployment, on_delete=models.CASCADE, related_name="shares")
    behaviour = models.ForeignKey(
        Behaviour, on_delete=models.PROTECT, related_name="deployment_shares"
    )
    requested = models.PositiveIntegerField(null=True, blank=True)
    ceiling = models.PositiveIntegerField(null=True, blank=True)
    live = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["deployment", "behaviour__slug"]
        constraints = [
            models.UniqueConstraint(
                fields=["deployment", "behaviour"], name="one_share_per_behaviour"
            )
        ]

    def __str__(self) -> str:
        return f"{self.deployment_id}/{self.behaviour_id}: {self.live}"


class DeploymentApproval(models.Model):
    """One approval with the gate as the approver saw it, recomputed then. Append-only."""

    deployment = models.ForeignKey(Deployment, on_delete=models.PROTECT, related_name="approvals")
    approver = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField()
    ceiling = models.JSONField(help_text="Basis points per behaviour this approval covers.")
    gate = models.JSONField(help_text="training.core.deploy.gate.GateVerdict.to_dict()")
    summary = models.TextField()

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"approval {self.pk} of deployment {self.deployment_id}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("approvals are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError("approvals are append-only")


class DeploymentUsage(models.Model):
    """What serving reported for one deployment on one UTC day."""

    deployment = models.ForeignKey(Deployment, on_delete=models.CASCADE, related_name="usage")
    day = models.DateField()
    tokens = models.PositiveBigIntegerField(default=0)
    money = models.DecimalField(max_digits=16, decimal_places=6, default=Decimal(0))
    reports = models.PositiveIntegerField(default=0)
    exceeded = models.BooleanField(default=False)

    class Meta:
        ordering = ["deployment", "-day"]
        constraints = [
            models.UniqueConstraint(fields=["deployment", "day"], name="one_usage_row_per_day")
        ]

    def __str__(self) -> str:
        return f"{self.deployment_id} on {self.day}: {self.tokens} tokens, {self.money}"


class ApiClient(models.Model):
    """Serving infrastructure that asks the route endpoint and reports usage. Only the token's
    sha256 is kept; ``key`` is its public part, how a request finds the row to compare with."""

    name = models.CharField(max_length=100, unique=True)
    key = models.CharField(max_length=16, unique=True)
    token_sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
