"""A candidate's trial matrix as evidence: its trials in reading order, each with a verdict, and
the counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from ..models import Candidate, TrialRun


def trials_for(candidate: Candidate) -> list[TrialRun]:
    """Oracle first, then the no-op, then the controls by name; repeats in order."""
    trials = list(candidate.trials.defer("logs", "detail").order_by("role", "repeat", "id"))
    rank = {"oracle": 0, "noop": 1}
    return sorted(trials, key=lambda t: (rank.get(t.role, 2), t.role, t.repeat, t.pk))


@dataclass(frozen=True)
class TrialRunRow:
    trial: TrialRun
    verdict: str  # pass | fail | ungraded | skipped | waiting
    seconds: float | None


def trial_rows(trials: Sequence[TrialRun]) -> list[TrialRunRow]:
    rows = []
    for t in trials:
        if t.status == TrialRun.Status.UNGRADED:
            verdict = "ungraded"
        elif t.status == TrialRun.Status.SKIPPED:
            verdict = "skipped"
        elif t.status == TrialRun.Status.GRADED:
            verdict = "pass" if t.passed else "fail"
        else:
            verdict = "waiting"
        seconds = t.duration_ms / 1000 if t.duration_ms is not None else None
        rows.append(TrialRunRow(t, verdict, seconds))
    return rows


@dataclass(frozen=True)
class TrialSummary:
    total: int
    graded: int
    passed: int
    failed: int
    ungraded: int
    waiting: int
    skipped: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def trial_summary(trials: Sequence[TrialRun]) -> TrialSummary:
    graded = [t for t in trials if t.status == TrialRun.Status.GRADED]
    passed = sum(1 for t in graded if t.passed)
    skipped = sum(1 for t in trials if t.status == TrialRun.Status.SKIPPED)
    return TrialSummary(
        total=len(trials) - skipped,
        skipped=skipped,
        graded=len(graded),
        passed=passed,
        failed=len(graded) - passed,
        ungraded=sum(1 for t in trials if t.status == TrialRun.Status.UNGRADED),
        waiting=sum(
            1 for t in trials if t.status in (TrialRun.Status.QUEUED, TrialRun.Status.RUNNING)
        ),
    )
