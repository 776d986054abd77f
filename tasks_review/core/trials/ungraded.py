"""Why candidates are ungraded, grouped with counts.

A matrix names the trial in each reason it records (``oracle #2 ungraded: <cause>``), and one
infrastructure failure (the daemon gone, a build timing out) usually leaves every trial of a
matrix and every matrix of a run ungraded: grouping by the cause, not the whole reason, gives
one line per failure instead of one per trial.

>>> by_trial(["oracle #1 ungraded: daemon gone", "noop #1 ungraded: daemon gone"])
(ReasonCount(reason='daemon gone', count=2),)
>>> by_candidate([["oracle #1 ungraded: daemon gone"], [], ["harness error: boom"]])[0]
ReasonCount(reason='daemon gone', count=1)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

NO_REASON = "no reason recorded"
_TRIAL_LABEL = re.compile(r"^\w+ #\d+ ungraded: ")


@dataclass(frozen=True, slots=True)
class ReasonCount:
    reason: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "count": self.count}


def trial_reason(name: str, repeat: int, error: str) -> str:
    """The reason a matrix records for one ungraded trial; ``cause`` reads it back."""
    return f"{name} #{repeat} ungraded: {error or NO_REASON}"


def cause(reason: str) -> str:
    """The reason without the trial it names; other reasons (a harness error) as they are."""
    return _TRIAL_LABEL.sub("", reason, count=1).strip() or NO_REASON


def by_trial(reasons: Iterable[str]) -> tuple[ReasonCount, ...]:
    """One candidate's causes, each with how many of its recorded reasons name it."""
    return _ordered(Counter(cause(r) for r in reasons) or Counter([NO_REASON]))


def by_candidate(per_candidate: Iterable[Iterable[str]]) -> tuple[ReasonCount, ...]:
    """A run's causes, each with how many candidates it left ungraded (once per candidate)."""
    counts: Counter[str] = Counter()
    for reasons in per_candidate:
        counts.update(r.reason for r in by_trial(reasons))
    return _ordered(counts)


def _ordered(counts: Counter[str]) -> tuple[ReasonCount, ...]:
    return tuple(ReasonCount(r, n) for r, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])))
