"""What a pipeline run's page, its report.json and the generate command say about it beyond
its counts: why its ungraded candidates are ungraded, its yield per harness and language, and
which of its drops are the product's and which the environment's limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.dropsides import drop_sides as sides
from ..core.trials.ungraded import ReasonCount, by_candidate
from ..core.yields import CandidateOutcome, Yields
from ..core.yields import yields as count_yields
from ..models import Candidate, PipelineRun


@dataclass(frozen=True)
class Ungraded:
    """The run's ungraded candidates, and their causes with how many candidates each hit."""

    candidates: list[Candidate]
    reasons: tuple[ReasonCount, ...]

    @property
    def count(self) -> int:
        return len(self.candidates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "reasons": [r.to_dict() for r in self.reasons],
            "candidates": [
                {
                    "candidate": c.id,
                    "task": c.task_name,
                    "reasons": [r.to_dict() for r in c.ungraded_reasons],
                }
                for c in self.candidates
            ],
        }


def ungraded(run: PipelineRun) -> Ungraded:
    rows = list(
        Candidate.objects.filter(run=run, status=Candidate.Status.UNGRADED)
        .only("id", "status", "task_name", "verification")
        .order_by("id")
    )
    return Ungraded(rows, by_candidate(c.verification.get("reasons") or [] for c in rows))


def yields(run: PipelineRun) -> Yields:
    rows = Candidate.objects.filter(run=run).values_list(
        "trajectory_id", "trajectory__format", "language", "status", "task_dir", "drop_reason"
    )
    return count_yields(
        dict(run.trajectories.values_list("id", "format")),
        (
            CandidateOutcome(
                t, harness, language, status, written=bool(task_dir), drop_reason=reason
            )
            for t, harness, language, status, task_dir, reason in rows
        ),
    )


def drop_sides(run: PipelineRun) -> dict[str, Any]:
    """The run's drops split into the product's (by reason) and the environment's limits."""
    rows = Candidate.objects.filter(run=run, status=Candidate.Status.DROPPED).values_list(
        "drop_stage", "drop_reason", "drop_detail"
    )
    return sides(rows)


def counts(run: PipelineRun, shown: Yields | None = None) -> dict[str, int]:
    """The run's counters as its page shows them. What a candidate's row decides (written,
    kept, dropped, ungraded) is counted from the rows, as the yield table counts it: the run's
    own counters of those are brought up to date only when a stage ends, and mid-run a card
    said "kept 0" beside a table with 3 kept."""
    total = (shown or yields(run)).total
    ungraded = Candidate.objects.filter(run=run, status=Candidate.Status.UNGRADED).count()
    return {
        **run.counts,
        "candidates": total.candidates,
        "written": total.written,
        "kept": total.kept,
        "dropped": total.dropped,
        "ungraded": ungraded,
    }
