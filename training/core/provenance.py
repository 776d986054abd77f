"""One provenance rule: whether a rollout may enter a training export, a preference pair or a
gate now, and if not, why.

>>> task = TaskState(kept=True, verifier_current=True, review=Review.ACCEPTED, held_out=False)
>>> regraded = RolloutState(graded=True, reward=0.0, evaluated=True, eval_reward=1.0)
>>> current = RolloutState(graded=True, reward=1.0, evaluated=True, eval_reward=1.0)
>>> refusals(task, current, Policy(Use.TRAIN))
()
>>> refusals(task, regraded, Policy(Use.TRAIN))
(<Reason.EVAL_STALE: 'eval_stale'>,)
>>> held = TaskState(kept=True, verifier_current=True, review=Review.NEEDS_FIX, held_out=True)
>>> [r.value for r in task_refusals(held, Policy(Use.TRAIN))]
['review_needs_fix', 'held_out']
>>> [r.value for r in task_refusals(held, Policy(Use.GATE))]
['review_needs_fix']

A rollout counts only when all of these hold now:

- its task is kept, by the current verifier version (a task kept by an older grader waits to be
  verified again);
- its task is accepted on the review desk: not rejected, not needs-fix; a pending or disputed
  task counts only where the behaviour opted in to unreviewed tasks (``Policy``); a task its
  author wrote (an authored task) stands reviewed by its author;
- for training (exports and pairs) its task is held out nowhere: splits belong to the task, so
  a task held out for any behaviour never trains; the gate, conversely, measures held-out tasks
  only;
- it is graded, and the eval result used (when one is) was computed on its current reward, not
  on a reward an older grade gave.

Everything here is plain data: the Django side reads the rows into these states
(``training.selectors.provenance``) and counts what was left out by reason for the manifests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "Policy",
    "Reason",
    "Review",
    "RolloutState",
    "TaskState",
    "Use",
    "WORDS",
    "counted",
    "refusals",
    "rule_inputs",
    "task_refusals",
]


class Use(StrEnum):
    TRAIN = "train"  # a training export of any kind, or a preference pair
    GATE = "gate"  # the held-out deployment gate


class Review(StrEnum):
    ACCEPTED = "accepted"
    PENDING = "pending"
    REJECTED = "rejected"
    NEEDS_FIX = "needs_fix"
    DISPUTED = "disputed"
    AUTHORED = "authored"  # written by its user for a behaviour: not for the review desk


class Reason(StrEnum):
    NOT_KEPT = "task_not_kept"
    VERIFIER_STALE = "verifier_stale"
    REJECTED = "review_rejected"
    NEEDS_FIX = "review_needs_fix"
    UNREVIEWED = "review_pending"
    HELD_OUT = "held_out"
    NOT_HELD_OUT = "not_held_out"
    NOT_GRADED = "not_graded"
    EVAL_STALE = "eval_stale"


WORDS = {  # what a left-out row's task (or the rollout itself) is, after "left out:"
    Reason.NOT_KEPT: "no longer kept",
    Reason.VERIFIER_STALE: "kept by an older verifier (verify again)",
    Reason.REJECTED: "rejected on the review desk",
    Reason.NEEDS_FIX: "marked needs-fix on the review desk",
    Reason.UNREVIEWED: "not accepted on the review desk yet",
    Reason.HELD_OUT: "held out (for this or another behaviour)",
    Reason.NOT_HELD_OUT: "not held out",
    Reason.NOT_GRADED: "not graded",
    Reason.EVAL_STALE: "eval result older than its current grade (run the eval again)",
}


@dataclass(frozen=True)
class TaskState:
    kept: bool
    verifier_current: bool
    review: Review
    held_out: bool  # held out for any behaviour


@dataclass(frozen=True)
class RolloutState:
    graded: bool
    reward: float | None
    # Whether an eval result is used for it (exports use one; the gate scores rollouts now),
    # and the verified reward that result was computed on (None: not recorded, so unknown).
    evaluated: bool = False
    eval_reward: float | None = None


@dataclass(frozen=True)
class Policy:
    use: Use
    allow_unreviewed: bool = False  # the behaviour opted in to pending and disputed tasks


_REVIEW = {
    Review.REJECTED: Reason.REJECTED,
    Review.NEEDS_FIX: Reason.NEEDS_FIX,
    Review.PENDING: Reason.UNREVIEWED,
    Review.DISPUTED: Reason.UNREVIEWED,
}


def task_refusals(task: TaskState, policy: Policy) -> tuple[Reason, ...]:
    """Why no rollout of ``task`` may be used for ``policy`` now; empty when they may."""
    why: list[Reason] = []
    if not task.kept:
        why.append(Reason.NOT_KEPT)
    elif not task.verifier_current:
        why.append(Reason.VERIFIER_STALE)
    review = _REVIEW.get(task.review)
    if review is not None and not (review is Reason.UNREVIEWED and policy.allow_unreviewed):
        why.append(review)
    if policy.use is Use.TRAIN and task.held_out:
        why.append(Reason.HELD_OUT)
    if policy.use is Use.GATE and not task.held_out:
        why.append(Reason.NOT_HELD_OUT)
    return tuple(why)


def refusals(task: TaskState, rollout: RolloutState, policy: Policy) -> tuple[Reason, ...]:
    """Why this rollout may not be used for ``policy`` now; empty when it may."""
    why = list(task_refusals(task, policy))
    if not rollout.graded or rollout.reward is None:
        why.append(Reason.NOT_GRADED)
    elif rollout.evaluated and (
        rollout.eval_reward is None or abs(rollout.eval_reward - rollout.reward) > 1e-9
    ):
        why.append(Reason.EVAL_STALE)
    return tuple(why)


def counted(refused: Iterable[tuple[Reason, ...]]) -> dict[str, int]:
    """Left-out counts by first reason (each left-out row counted once), for a manifest."""
    counts = Counter(reasons[0].value for reasons in refused if reasons)
    return dict(sorted(counts.items()))


def rule_inputs(policy: Policy, verifier_version: int) -> dict[str, Any]:
    """What the rule was applied with, as a manifest records it."""
    return {
        "use": policy.use.value,
        "verifier_version": verifier_version,
        "review": "accepted or pending" if policy.allow_unreviewed else "accepted only",
        "held_out": "excluded when held out for any behaviour"
        if policy.use is Use.TRAIN
        else "held-out tasks only",
        "eval": "each rollout's latest result, computed on its current reward",
    }
