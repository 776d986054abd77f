"""A run's yield per harness and per language, and its most common drop reasons.

The denominators differ: a harness counts every trajectory the run ingested from it, a
language only the trajectories that gave at least one candidate in it (a trajectory has no
language until a check is found in it).

>>> y = yields({1: "codex", 2: "codex", 3: "pi"}, [
...     CandidateOutcome(1, "codex", "python", "kept", written=True),
...     CandidateOutcome(1, "codex", "", "dropped", drop_reason="no_change"),
...     CandidateOutcome(3, "pi", "node", "dropped", drop_reason="no_change"),
... ])
>>> y.by_harness["codex"]
Bucket(trajectories=2, candidates=2, written=1, kept=1, dropped=1)
>>> y.by_language["unknown"].trajectories, y.top_drops
(1, (DropCount(reason='no_change', count=2),))
>>> y.total
Bucket(trajectories=3, candidates=3, written=1, kept=1, dropped=2)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

TOP_DROPS = 10
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class CandidateOutcome:
    """One candidate of the run (a drop included) and where it came from."""

    trajectory: int
    harness: str
    language: str
    status: str
    written: bool = False
    drop_reason: str = ""


@dataclass(frozen=True, slots=True)
class Bucket:
    trajectories: int
    candidates: int
    written: int
    kept: int
    dropped: int


@dataclass(frozen=True, slots=True)
class DropCount:
    reason: str
    count: int


@dataclass(frozen=True, slots=True)
class Yields:
    by_harness: dict[str, Bucket]
    by_language: dict[str, Bucket]
    top_drops: tuple[DropCount, ...]

    @property
    def total(self) -> Bucket:
        """The whole run: each candidate and trajectory is in exactly one harness's bucket."""
        buckets = self.by_harness.values()
        return Bucket(*(sum(getattr(b, f) for b in buckets) for f in Bucket.__dataclass_fields__))

    def to_dict(self) -> dict[str, Any]:
        return {
            "by_harness": {k: asdict(v) for k, v in self.by_harness.items()},
            "by_language": {k: asdict(v) for k, v in self.by_language.items()},
            "top_drops": [asdict(d) for d in self.top_drops],
        }


def yields(trajectories: Mapping[int, str], outcomes: Iterable[CandidateOutcome]) -> Yields:
    """``trajectories`` maps each ingested trajectory to its harness; ``outcomes`` are the
    run's candidates. Buckets are ordered by name, drop reasons by count then code."""
    rows = list(outcomes)
    harness_trajectories: dict[str, set[int]] = defaultdict(set)
    for trajectory, harness in trajectories.items():
        harness_trajectories[harness or UNKNOWN].add(trajectory)
    by_harness: dict[str, list[CandidateOutcome]] = defaultdict(list)
    by_language: dict[str, list[CandidateOutcome]] = defaultdict(list)
    language_trajectories: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        by_harness[row.harness or UNKNOWN].append(row)
        by_language[row.language or UNKNOWN].append(row)
        # A candidate's trajectory counts even when the run did not list it (an older run).
        harness_trajectories[row.harness or UNKNOWN].add(row.trajectory)
        language_trajectories[row.language or UNKNOWN].add(row.trajectory)
    drops = Counter(r.drop_reason for r in rows if r.status == "dropped")
    return Yields(
        by_harness={k: _bucket(v, by_harness[k]) for k, v in sorted(harness_trajectories.items())},
        by_language={
            k: _bucket(v, by_language[k]) for k, v in sorted(language_trajectories.items())
        },
        top_drops=tuple(
            DropCount(reason or UNKNOWN, n)
            for reason, n in sorted(drops.items(), key=lambda i: (-i[1], i[0]))[:TOP_DROPS]
        ),
    )


def _bucket(trajectories: set[int], rows: list[CandidateOutcome]) -> Bucket:
    return Bucket(
        trajectories=len(trajectories),
        candidates=len(rows),
        written=sum(r.written for r in rows),
        kept=sum(r.status == "kept" for r in rows),
        dropped=sum(r.status == "dropped" for r in rows),
    )
