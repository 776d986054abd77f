"""Pipeline runs and the candidates they mine; trials, reviews and the rest join them later."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q

from groundwork.jobs import DOCKER
from groundwork.models import Beating, Holdable, Job, PlainJob
from trajectories.models import Trajectory

if TYPE_CHECKING:
    from tasks_review.core.trials.ungraded import ReasonCount

# "verify" builds each candidate's image, checks it in the image and runs the trial matrix.
STAGES = ("ingest", "replay", "mine", "write", "verify", "report")


def empty_counts() -> dict[str, int]:
    return dict.fromkeys(
        (
            "files",
            "trajectories",
            "blocked",
            "replayed",
            "candidates",
            "reused",  # found again by content key: the earlier candidate, its verdicts kept
            "dropped",
            "prepared",
            "written",
            "kept",
            "ungraded",
        ),
        0,
    )


class PipelineRun(Job):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)
    WAITING = Q(status=Status.QUEUED)
    RUNNING = Q(status=Status.RUNNING)
    QUEUE = DOCKER

    config = models.JSONField(help_text="The parsed generate config, as run.")
    config_path = models.TextField(blank=True)
    destination = models.TextField()
    status = models.CharField(max_length=10, choices=Status, default=Status.QUEUED, db_index=True)
    stage = models.CharField(max_length=20, blank=True)
    stage_done = models.PositiveIntegerField(default=0)
    stage_total = models.PositiveIntegerField(default=0)
    stage_started_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=empty_counts)
    timings = models.JSONField(default=dict)
    cancel_requested = models.BooleanField(default=False)
    report = models.JSONField(null=True, blank=True)
    # One entry per trajectory a configured clone matched (clones.Overlay.to_dict, with the
    # trajectory's id): the commit its replay was laid over, or the reason it was not.
    clones = models.JSONField(default=list, blank=True)
    # What the ingest stage yielded (new and already-known alike): the run's denominators
    # per harness, which its candidates alone cannot give (a trajectory may yield none).
    trajectories = models.ManyToManyField(Trajectory, blank=True, related_name="pipeline_runs")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"pipeline run {self.pk} ({self.status})"

    @property
    def families(self) -> list[str]:
        options = (self.config.get("pipeline") or {}).get("options") or {}
        return list(options.get("families") or ["repair"])


class Candidate(Holdable, Beating):
    class Status(models.TextChoices):
        PROPOSED = "proposed"
        DROPPED = "dropped"
        WRITTEN = "written"
        VERIFYING = "verifying"
        KEPT = "kept"
        UNGRADED = "ungraded"

    # Verifying is the job: written (or ungraded, a retry) waits; on the docker queue.
    WAITING = Q(status__in=(Status.WRITTEN, Status.UNGRADED))
    RUNNING = Q(status=Status.VERIFYING)
    STARTED = "verify_started_at"
    QUEUE = DOCKER

    # A task a user wrote and imported (training.services.authored), kept by its own trial
    # matrix. Such a candidate is no desk item: it is the kept-task row that training's
    # AuthoredTask points to through its one-to-one relation (AuthoredTask.candidate), made when
    # the task is kept so that behaviours, rollouts, re-grading, exports and gates use it as any
    # kept task. No pipeline run, no trajectory; never reviewed (its author stands where a
    # reviewer would) nor re-verified (its own tests grade it, whatever our grader's version).
    AUTHORED = "authored"
    # The candidates the pipeline mined: the only ones the desk and reverify work on (``mined``
    # says it of one row).
    MINED = ~Q(family=AUTHORED)

    run = models.ForeignKey(
        PipelineRun, null=True, blank=True, on_delete=models.CASCADE, related_name="candidates"
    )
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.CASCADE, related_name="candidates"
    )
    family = models.CharField(max_length=20, db_index=True)
    key = models.CharField(max_length=64, db_index=True, help_text="Identity across runs.")
    status = models.CharField(max_length=10, choices=Status, default=Status.PROPOSED, db_index=True)
    language = models.CharField(max_length=20, blank=True, db_index=True)
    runner = models.CharField(max_length=40, blank=True)
    check_command = models.TextField()
    check_cwd = models.TextField(blank=True)
    fail_step = models.PositiveIntegerField(null=True)
    pass_step = models.PositiveIntegerField(null=True)
    instruction = models.TextField(blank=True)
    start_files = models.JSONField(default=dict)
    reference_files = models.JSONField(default=dict)
    changed = models.JSONField(default=dict)
    # The mined candidate as the core wrote it (tasks_review.core.mining), for later stages.
    payload = models.JSONField(default=dict, blank=True)
    # The trial matrix's outcome: status, reasons, image, build/check/wall seconds.
    verification = models.JSONField(default=dict, blank=True)
    # The grader version that gave the verdict (trials.version); older kept ones are stale.
    verifier_version = models.PositiveSmallIntegerField(null=True, blank=True)
    # How much the check asserts (approximate; trials.assertions) and how many tests passed on
    # the reference: a check too thin cannot tell a fix from a lookup table.
    check_assertions = models.PositiveIntegerField(null=True, blank=True)
    check_asserted_inputs = models.PositiveIntegerField(null=True, blank=True)
    check_tests = models.PositiveIntegerField(null=True, blank=True)

    class Grading(models.TextChoices):
        EQUIVALENCE = "equivalence", "Equivalence-graded"
        CHECK_ONLY = "check-only", "Check-only"

    # How a kept task's reward is decided (trials.probeset): hidden equivalence probes judged
    # outside the graded process, or the recorded check alone. Check-only tasks stay out of
    # training unless a behaviour opts in. Blank until verified by verifier v3.
    grading = models.CharField(max_length=12, choices=Grading, blank=True, db_index=True)
    verify_started_at = models.DateTimeField(null=True, blank=True)
    task_name = models.CharField(max_length=200, blank=True)
    task_dir = models.TextField(blank=True)
    drop_stage = models.CharField(max_length=20, blank=True)
    drop_reason = models.CharField(max_length=40, blank=True, db_index=True)
    drop_detail = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class ReviewStatus(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        REJECTED = "rejected"
        NEEDS_FIX = "needs_fix", "Needs fix"
        DISPUTED = "disputed", "Disputed (needs adjudication)"

    review_status = models.CharField(
        max_length=10, choices=ReviewStatus, default=ReviewStatus.PENDING, db_index=True
    )

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["run", "status"]),
            models.Index(fields=["status", "review_status"]),
        ]
        permissions = [
            ("review_candidate", "Can review candidates"),
            ("adjudicate_candidate", "Can adjudicate disagreements between reviewers"),
            ("export_dataset", "Can export accepted tasks as a Harbor dataset"),
            ("view_audit", "Can read the audit log"),
            ("run_pipeline", "Can start, re-run and cancel pipeline runs"),
        ]

    def __str__(self) -> str:
        return f"{self.family} candidate {self.pk}: {self.check_command[:60]}"

    @property
    def verifier_stale(self) -> bool:
        """Kept by a grader older than the current one: to be verified again (reverify)."""
        from tasks_review.core.trials.version import VERIFIER_VERSION

        if self.status != self.Status.KEPT or not self.mined:
            return False  # an authored task is kept by its own tests, which no grader changes
        return (self.verifier_version or 1) < VERIFIER_VERSION

    @property
    def mined(self) -> bool:
        """Mined by the pipeline, not authored (``MINED`` for querysets)."""
        return self.family != self.AUTHORED

    @property
    def ungraded_reasons(self) -> tuple[ReasonCount, ...]:
        """Why its matrix left it ungraded, each cause with how many trials it hit."""
        from tasks_review.core.trials.ungraded import by_trial

        if self.status != self.Status.UNGRADED:
            return ()
        return by_trial(self.verification.get("reasons") or [])

    @property
    def check_too_thin(self) -> bool | None:
        """Too few asserted inputs to tell a fix from a lookup table (None: not measured)."""
        from tasks_review.core.trials.assertions import CheckSize, too_thin

        if self.check_assertions is None or self.check_asserted_inputs is None:
            return None
        size = CheckSize(self.check_assertions, self.check_asserted_inputs, self.check_tests or 0)
        return too_thin(size)


class TrialRun(models.Model):
    """One trial of a candidate's matrix: the oracle, the no-op, or a tampering control.

    Infrastructure failures are UNGRADED, never a reward: a broken harness proves nothing.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        GRADED = "graded"
        UNGRADED = "ungraded"
        # A control that does not apply to the check (a pytest hook under unittest).
        SKIPPED = "skipped"

    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="trials")
    role = models.CharField(max_length=40, help_text="oracle, noop, or a control's name")
    repeat = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status, default=Status.QUEUED, db_index=True)
    reward = models.FloatField(null=True, blank=True)
    expected = models.FloatField(help_text="The reward this role must score.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    logs = models.TextField(blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["candidate", "id"]
        indexes = [models.Index(fields=["candidate", "role"])]

    def __str__(self) -> str:
        return f"{self.role}#{self.repeat} of candidate {self.candidate_id}: {self.status}"

    @property
    def passed(self) -> bool | None:
        if self.status != self.Status.GRADED or self.reward is None:
            return None
        return self.reward == self.expected


class Review(models.Model):
    class Decision(models.TextChoices):
        ACCEPT = "accept"
        REJECT = "reject"
        NEEDS_FIX = "needs_fix", "Needs fix"

    class Reason(models.TextChoices):
        GOOD = "good", "Good task"
        LEAKS_FIX = "leaks_fix", "Leaks the fix"
        VERIFIER_GAMEABLE = "verifier_gameable", "Verifier gameable"
        ENVIRONMENT_BROKEN = "environment_broken", "Environment broken"
        TOO_EASY = "too_easy", "Too easy"
        TOO_HARD = "too_hard", "Too hard"
        AMBIGUOUS_INSTRUCTION = "ambiguous_instruction", "Ambiguous instruction"
        DUPLICATE = "duplicate", "Duplicate"
        OTHER = "other", "Other"

    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decision = models.CharField(max_length=10, choices=Decision)
    reason = models.CharField(max_length=30, choices=Reason)
    comment = models.TextField(blank=True)
    # An adjudication settles a disagreement; it is made by a reviewer-role user and wins.
    is_adjudication = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["candidate", "reviewer", "is_adjudication"], name="one_review_per_reviewer"
            )
        ]

    def __str__(self) -> str:
        return f"{self.decision} ({self.reason}) on candidate {self.candidate_id}"


class DatasetExport(PlainJob):
    """Accepted tasks exported as a Harbor dataset folder (task folders plus a manifest)."""

    path = models.TextField(blank=True)
    task_count = models.PositiveIntegerField(default=0)
    manifest = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.status}, {self.task_count} tasks)"


class DeskSetting(models.Model):
    """A number of the desk an admin changes in the app (the settings page), used from the next
    request on; without a row the environment variable's value (``settings.TRAJ2ENV``) stands.
    The keys are both floors' (a preference pair's labels are the training floor's): one table,
    one page, one audited change."""

    class Key(models.TextChoices):
        REVIEWS_PER_CANDIDATE = "REVIEWS_PER_CANDIDATE", "Reviews per candidate"
        LABELS_PER_PAIR = "LABELS_PER_PAIR", "Labels per preference pair"

    key = models.CharField(max_length=40, choices=Key, unique=True)
    value = models.PositiveSmallIntegerField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return f"{self.key} = {self.value}"
