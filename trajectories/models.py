"""Trajectories, their steps, the replay and the content-addressed blobs behind them.

Blobs live in the database (compressed) rather than on a local disk so that every worker host
sees the same store through the one connection it already has.
"""

from __future__ import annotations

import zlib

from django.db import models

from groundwork.models import PlainJob


class Blob(models.Model):
    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.PositiveBigIntegerField()
    data = models.BinaryField()  # zlib-compressed content

    def __str__(self) -> str:
        return f"blob {self.sha256[:12]} ({self.size} bytes)"

    def content(self) -> bytes:
        return zlib.decompress(self.data)


class IngestRun(PlainJob):
    """One `ingest` of files or folders, as a job with its progress on the row."""

    paths = models.JSONField(default=list)
    format = models.CharField(max_length=20, default="auto")
    scan = models.BooleanField(default=False)
    files_total = models.PositiveIntegerField(default=0)
    files_done = models.PositiveIntegerField(default=0)
    ingested = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"ingest run {self.pk} ({self.status})"


class IngestIssue(models.Model):
    """A file the run did not ingest: skipped (not a trajectory, not a regular file) or failed
    (a bad file); or a warning: a line of an ingested file that was skipped or repaired, which
    makes that trajectory partial."""

    class Kind(models.TextChoices):
        SKIPPED = "skipped"
        FAILED = "failed"
        WARNING = "warning"

    run = models.ForeignKey(IngestRun, on_delete=models.CASCADE, related_name="issues")
    trajectory = models.ForeignKey(
        "Trajectory", null=True, blank=True, on_delete=models.CASCADE, related_name="warnings"
    )
    path = models.TextField()
    line = models.PositiveIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=10, choices=Kind)
    reason = models.TextField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.path}: {self.reason}"


class SourceFile(models.Model):
    """A file ingest read: the source of one trajectory, or another recording of its session.

    A trajectory's sources are its own ``source`` and its ``twin_sources``: the other files
    (a session JSONL beside its ATIF ``trajectory.json``) that ``core.sessions.same_session``
    says record the same session, kept so mining sees that session once.
    """

    sha256 = models.CharField(max_length=64, unique=True)
    path = models.TextField(help_text="Where the bytes were first seen.")
    format = models.CharField(max_length=20, blank=True)
    size = models.PositiveBigIntegerField()
    raw = models.ForeignKey(Blob, on_delete=models.PROTECT, related_name="+")
    twin_of = models.ForeignKey(
        "Trajectory",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="twin_sources",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.path


class Trajectory(models.Model):
    class Format(models.TextChoices):
        ATIF = "atif", "ATIF"
        CLAUDE_CODE = "claude-code", "Claude Code"
        CODEX = "codex", "Codex"
        PI = "pi", "pi"

    class Status(models.TextChoices):
        INGESTED = "ingested"
        REPLAYING = "replaying"
        REPLAYED = "replayed"
        REPLAY_FAILED = "replay_failed"

    source = models.OneToOneField(SourceFile, on_delete=models.CASCADE, related_name="trajectory")
    format = models.CharField(max_length=20, choices=Format, db_index=True)
    schema_version = models.CharField(max_length=20)
    agent_name = models.CharField(max_length=100, blank=True, db_index=True)
    agent_version = models.CharField(max_length=100, blank=True)
    model_name = models.CharField(max_length=200, blank=True, db_index=True)
    session_id = models.CharField(max_length=200, blank=True, db_index=True)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="subagents"
    )
    parent_session_id = models.CharField(max_length=200, blank=True, db_index=True)
    is_subagent = models.BooleanField(default=False)
    title = models.CharField(max_length=300, blank=True)
    cwd = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    steps_count = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status, default=Status.INGESTED, db_index=True)
    scanned = models.BooleanField(default=False)
    blocked = models.BooleanField(default=False, db_index=True)
    # Some lines of the source were skipped or repaired; its IngestIssue warnings say which.
    partial = models.BooleanField(default=False, db_index=True)
    scan_findings = models.JSONField(default=list, blank=True)
    harbor_task = models.CharField(max_length=300, blank=True)
    harbor_reward = models.FloatField(null=True, blank=True)
    replay_started_at = models.DateTimeField(null=True, blank=True)
    replay_error = models.TextField(blank=True)
    atif = models.ForeignKey(Blob, on_delete=models.PROTECT, related_name="+")
    side_data = models.ForeignKey(Blob, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-id"]
        permissions = [("review_trajectory", "Can open trajectories and their replays")]

    def __str__(self) -> str:
        return self.title or self.session_id or f"trajectory {self.pk}"

    @property
    def sources(self) -> list[SourceFile]:
        """Every file that recorded this session: the one it was made from first."""
        return [self.source, *self.twin_sources.order_by("id")]

    @property
    def total_tokens(self) -> int | None:
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class Step(models.Model):
    """One ATIF step, stored as a row so that the stepper loads one step, not the document."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()  # position in the ATIF steps list, 0-based
    step_id = models.PositiveIntegerField()
    source = models.CharField(max_length=10)
    timestamp = models.CharField(max_length=40, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    message = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    observations = models.JSONField(default=list, blank=True)
    is_copied_context = models.BooleanField(default=False)
    # Filled by the replay: tool-call events completed before this step, and after it.
    events_start = models.PositiveIntegerField(null=True, blank=True)
    events_end = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["trajectory", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "index"], name="step_unique_index"),
        ]

    def __str__(self) -> str:
        return f"step {self.step_id} of trajectory {self.trajectory_id}"


class Replay(models.Model):
    """The replay of one trajectory, computed once by a worker. The per-step file states live in
    ReplayChunk rows so that a lookup at any step loads one chunk, not the whole replay."""

    trajectory = models.OneToOneField(Trajectory, on_delete=models.CASCADE, related_name="replay")
    root = models.TextField(blank=True)
    every = models.PositiveIntegerField()
    events = models.PositiveIntegerField()
    files_known = models.PositiveIntegerField(default=0)
    files_lost = models.PositiveIntegerField(default=0)
    files_partial = models.PositiveIntegerField(default=0)
    uncertain_trees = models.JSONField(default=list)
    commands_count = models.PositiveIntegerField(default=0)
    checks = models.JSONField(default=list)
    stored_bytes = models.PositiveBigIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"replay of trajectory {self.trajectory_id}"


class ReplayChunk(models.Model):
    """Checkpoint `number` (the state before event number*every) and the deltas that follow it."""

    replay = models.ForeignKey(Replay, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    checkpoint = models.JSONField()
    deltas = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["replay", "number"], name="chunk_unique_number")
        ]

    def __str__(self) -> str:
        return f"chunk {self.number} of replay {self.replay_id}"


class Command(models.Model):
    """A shell call with where it ran, what it printed, how it exited, and whether it is a check."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="commands")
    index = models.PositiveIntegerField()
    step_index = models.PositiveIntegerField()
    event_index = models.PositiveIntegerField()
    tool_call_id = models.CharField(max_length=200, blank=True)
    command = models.TextField()
    cwd = models.TextField(blank=True)
    output = models.TextField(blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    check_kind = models.CharField(max_length=20, blank=True, db_index=True)
    check_language = models.CharField(max_length=20, blank=True)
    check_runner = models.CharField(max_length=40, blank=True)
    check_masked = models.BooleanField(default=False)

    class Meta:
        ordering = ["trajectory", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "index"], name="command_unique_index")
        ]
        indexes = [models.Index(fields=["trajectory", "step_index"])]

    def __str__(self) -> str:
        return self.command[:80]

    @property
    def is_check(self) -> bool:
        return bool(self.check_kind)
