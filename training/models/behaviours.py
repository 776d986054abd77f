"""Behaviours and their versions, tasks by split, rollouts, eval runs and their results.

Specs, facts and results are the core's dataclasses stored as JSON (``training.core``); the rows
add identity, ownership, status and the links a page follows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from groundwork.jobs import DOCKER
from groundwork.models import Beating, PlainJob
from tasks_review.models import Candidate
from trajectories.models import Trajectory


class Behaviour(models.Model):
    """A narrow, observable agent behaviour; what it means lives in its versions' specs."""

    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    # The model the route endpoint answers for this behaviour when no adapter is deployed.
    base_model = models.CharField(max_length=200, blank=True)
    held_out_fraction = models.FloatField(default=0.3)
    # Tasks graded by their recorded check alone (no hidden probe tells a fix from the start)
    # enter this behaviour's exports and gates only when someone opted in (training.selectors
    # .grading says which kinds count).
    allow_check_only = models.BooleanField(default=False)
    # Tasks not yet accepted on the review desk (pending or disputed) enter this behaviour's
    # exports, pairs and gates only when someone opted in (training.core.provenance); rejected
    # and needs-fix tasks never do.
    allow_unreviewed = models.BooleanField(default=False)
    # DPO and KTO follow people's labels; an unlabelled pair follows its verified reward only
    # where someone chose that for the behaviour (the manifest says which it was).
    reward_preferences = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        permissions = [
            ("view_training", "Can see behaviours, rollouts and eval results"),
            ("edit_behaviour", "Can add and edit behaviours and choose their tasks"),
            ("run_eval", "Can start eval runs and ingest rollouts"),
        ]

    def __str__(self) -> str:
        return self.slug

    def latest_version(self) -> BehaviourVersion | None:
        return self.versions.order_by("-number").first()


class BehaviourVersion(models.Model):
    """One immutable version of a behaviour's spec; results point at the version they used."""

    behaviour = models.ForeignKey(Behaviour, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    spec = models.JSONField(help_text="The spec as training.core.spec validated it.")
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["behaviour", "number"]
        constraints = [
            models.UniqueConstraint(fields=["behaviour", "number"], name="one_number_per_version")
        ]

    def __str__(self) -> str:
        return f"{self.behaviour_id} v{self.number}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("a behaviour version is immutable; create the next one")
        super().save(*args, **kwargs)


class BehaviourTask(models.Model):
    """A kept task chosen for a behaviour, with its split: assigned once, never moved."""

    class Split(models.TextChoices):
        TRAIN = "train"
        HELD_OUT = "held_out", "Held-out"

    behaviour = models.ForeignKey(Behaviour, on_delete=models.CASCADE, related_name="tasks")
    candidate = models.ForeignKey(Candidate, on_delete=models.PROTECT, related_name="behaviours")
    task_key = models.CharField(max_length=200, help_text="Stable identity the split hashes.")
    split = models.CharField(max_length=10, choices=Split)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["behaviour", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["behaviour", "candidate"], name="task_once_per_behaviour"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.behaviour_id}: candidate {self.candidate_id} ({self.split})"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            old = BehaviourTask.objects.filter(pk=self.pk).values_list("split", flat=True).first()
            if old is not None and old != self.split:
                raise PermissionError("a task's split is assigned once and never moves")
        super().save(*args, **kwargs)


class RolloutImport(PlainJob):
    """One `harbor run` jobs folder read into rollouts: a job with its progress on the row."""

    path = models.TextField()
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"rollout import {self.pk} ({self.status})"


class Rollout(Beating):
    """An attempt of a kept task by an agent; its reward is re-graded from the world it left."""

    class Grade(models.TextChoices):
        PENDING = "pending"
        GRADING = "grading"
        GRADED = "graded"
        # The grader's infrastructure failed, or nothing was collected to grade: never a score.
        UNGRADED = "ungraded"

    # Grading is the job: it claims pending rollouts, on the docker queue.
    WAITING = Q(grade=Grade.PENDING)
    RUNNING = Q(grade=Grade.GRADING)
    STARTED = "grade_started_at"
    QUEUE = DOCKER

    candidate = models.ForeignKey(Candidate, on_delete=models.PROTECT, related_name="rollouts")
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="rollouts"
    )
    source = models.ForeignKey(
        RolloutImport, null=True, blank=True, on_delete=models.SET_NULL, related_name="rollouts"
    )
    trial_name = models.CharField(max_length=200, unique=True)
    trial_dir = models.TextField(blank=True)
    app_dir = models.TextField(blank=True, help_text="The agent's collected /app.")
    agent = models.CharField(max_length=100, db_index=True)
    model = models.CharField(max_length=200, blank=True, db_index=True)
    adapter = models.CharField(max_length=200, blank=True, db_index=True)
    # The artifact digest of the adapter the serving side says answered the trial (result.json's
    # agent metadata, ``training.core.harbor.jobs.SERVED_KEY``); "" when none is recorded. The
    # gate counts a rollout for an adapter by this, never by the ``adapter`` name it claims.
    served_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    prompt_version = models.CharField(max_length=100, blank=True)
    harbor_reward = models.FloatField(null=True, blank=True)
    reward = models.FloatField(null=True, blank=True, help_text="Re-graded by our verifier.")
    grade = models.CharField(max_length=10, choices=Grade, default=Grade.PENDING, db_index=True)
    grade_detail = models.JSONField(default=dict, blank=True)
    grade_started_at = models.DateTimeField(null=True, blank=True)
    # training.core.facts.TrajectoryFacts.to_dict(): what the harness scores, stored once so an
    # eval run reads it instead of replaying every trajectory again.
    facts = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["candidate", "agent"])]

    def __str__(self) -> str:
        return f"rollout {self.pk}: {self.agent} on candidate {self.candidate_id}"

    @property
    def disagrees(self) -> bool:
        """Harbor's reward and ours differ: shown, and ours is the one that counts."""
        return (
            self.reward is not None
            and self.harbor_reward is not None
            and abs(self.reward - self.harbor_reward) > 1e-9
        )


class EvalRun(PlainJob):
    """A behaviour version scored over the rollouts of its tasks: a job with progress."""

    version = models.ForeignKey(BehaviourVersion, on_delete=models.PROTECT, related_name="runs")
    agent = models.CharField(max_length=100, blank=True, help_text="Only this agent's rollouts.")
    k = models.PositiveSmallIntegerField(default=1)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"eval run {self.pk} of {self.version} ({self.status})"


class EvalResult(models.Model):
    """One rollout scored against one behaviour version (training.core.harness.HarnessResult)."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="results")
    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="results")
    task = models.ForeignKey(BehaviourTask, on_delete=models.CASCADE, related_name="results")
    split = models.CharField(max_length=10, choices=BehaviourTask.Split)
    reward = models.FloatField()
    passed = models.BooleanField()
    self_report_only = models.BooleanField(default=False)
    forbidden_hits = models.PositiveSmallIntegerField(default=0)
    detail = models.JSONField(help_text="The harness's result: matches with their steps.")

    class Meta:
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "rollout"], name="one_result_per_rollout")
        ]

    def __str__(self) -> str:
        return f"{self.rollout_id} in eval run {self.run_id}: {self.reward}"
