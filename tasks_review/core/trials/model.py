"""What the trial layer returns: drops, trial records and matrix results. Plain data only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from .version import VERIFIER_VERSION

LOG_CHARS = 6000  # per trial record: the head and the tail, where failures are
ORACLE_REWARD = 1.0  # what the task's own solution must score, every repeat


class TrialDropReason(StrEnum):
    """Why the trial layer drops a candidate before its matrix; stable codes, like mining's."""

    # The project declares dependencies (requirements, pyproject, package.json ...) or its
    # check needs a tool (pytest, jest ...) that neither the image nor the configured offline
    # sources (wheelhouse, npm cache) provide.
    DEPENDENCY_UNAVAILABLE_OFFLINE = "dependency_unavailable_offline"
    # Inside the image the recorded check already passes on the starting files.
    CHECK_NOT_FAILING_AT_START = "check_not_failing_at_start"
    # Inside the image the recorded check does not pass on the reference files.
    CHECK_NOT_PASSING_AT_REFERENCE = "check_not_passing_at_reference"


@dataclass(frozen=True, slots=True)
class TrialDrop:
    reason: TrialDropReason
    detail: str
    stage: str  # "prepare" or "check"
    log: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "reason": str(self.reason),
            "detail": self.detail,
            "log": self.log,
        }


class Role(StrEnum):
    ORACLE = "oracle"
    NOOP = "noop"
    CONTROL = "control"


class TrialStatus(StrEnum):
    GRADED = "graded"
    # The harness could not do its job (daemon, build, API timeout): says nothing about the
    # task, so it is neither 0 nor 1 and the candidate waits for a retry.
    UNGRADED = "ungraded"
    # A control that does not apply to this check (a pytest hook for a unittest check).
    SKIPPED = "skipped"


class MatrixStatus(StrEnum):
    KEPT = "kept"
    REJECTED = "rejected"  # a graded trial did not score what it must
    DROPPED = "dropped"  # prepare or the check in the image dropped it
    UNGRADED = "ungraded"  # some trial could not be graded and nothing rejects it yet


@dataclass(frozen=True, slots=True)
class TrialRecord:
    role: Role
    name: str  # "oracle", "noop" or the control's name
    repeat: int
    reward: float | None
    expected: float
    status: TrialStatus
    started: datetime
    finished: datetime
    seconds: float
    logs: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def as_expected(self) -> bool:
        return self.status is TrialStatus.GRADED and self.reward == self.expected

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": str(self.role),
            "name": self.name,
            "repeat": self.repeat,
            "reward": self.reward,
            "expected": self.expected,
            "status": str(self.status),
            "started": self.started.isoformat(),
            "finished": self.finished.isoformat(),
            "seconds": round(self.seconds, 3),
            "logs": self.logs,
            "detail": dict(self.detail),
        }


@dataclass(frozen=True, slots=True)
class MatrixResult:
    task_dir: str
    status: MatrixStatus
    trials: tuple[TrialRecord, ...] = ()
    reasons: tuple[str, ...] = ()  # why it is not kept, one line each
    drop: TrialDrop | None = None
    image: str | None = None
    build_seconds: float = 0.0
    check_seconds: float = 0.0
    wall_seconds: float = 0.0
    # How much the check asserts (trials.assertions.CheckSize.to_dict), when it ran in the image.
    check: Mapping[str, Any] = field(default_factory=dict)
    # How the reward is decided (probeset.ProbeSet.summary): "equivalence" or "check-only".
    grading: Mapping[str, Any] = field(default_factory=dict)
    verifier_version: int = VERIFIER_VERSION

    @property
    def kept(self) -> bool:
        return self.status is MatrixStatus.KEPT

    def of(self, name: str) -> list[TrialRecord]:
        return [t for t in self.trials if t.name == name]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_dir": self.task_dir,
            "status": str(self.status),
            "kept": self.kept,
            "reasons": list(self.reasons),
            "drop": self.drop.to_dict() if self.drop else None,
            "image": self.image,
            "build_seconds": round(self.build_seconds, 3),
            "check_seconds": round(self.check_seconds, 3),
            "wall_seconds": round(self.wall_seconds, 3),
            "check": dict(self.check),
            "grading": dict(self.grading),
            "verifier_version": self.verifier_version,
            "trials": [t.to_dict() for t in self.trials],
        }


def trim(text: str, limit: int = LOG_CHARS) -> str:
    """``text`` cut to its head and tail when longer than ``limit``."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"
