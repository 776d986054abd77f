"""The provenance rule (``training.core.provenance``) read from the rows: each task's state now
(kept by the current verifier, its review verdict, held out anywhere) and the behaviour's
policy. Exports, preference pairs and the gate all ask here, so the rule lives in one place.

Splits belong to the task: a task is held out when any behaviour holds it out, by its
candidate or by its content key (a re-mined copy of the same task is the same task).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from tasks_review.core.trials.version import VERIFIER_VERSION
from tasks_review.models import Candidate
from training.core.provenance import (
    WORDS,
    Policy,
    Reason,
    Review,
    RolloutState,
    TaskState,
    Use,
    counted,
    refusals,
    rule_inputs,
    task_refusals,
)

from ..models import Behaviour, BehaviourTask

__all__ = [
    "Admission",
    "RolloutState",
    "Use",
    "held_out_anywhere",
    "policy_for",
    "review_of",
    "task_states",
]


def policy_for(behaviour: Behaviour, use: Use) -> Policy:
    return Policy(use=use, allow_unreviewed=behaviour.allow_unreviewed)


def review_of(candidate: Candidate) -> Review:
    if not candidate.mined:
        return Review.AUTHORED
    return Review(candidate.review_status)


def held_out_anywhere(candidates: Iterable[Candidate]) -> set[int]:
    """The ids of ``candidates`` held out for any behaviour, by candidate or content key."""
    by_id = {c.pk: c for c in candidates}
    keys = {c.key for c in by_id.values() if c.key}
    rows = BehaviourTask.objects.filter(split=BehaviourTask.Split.HELD_OUT).filter(
        Q(candidate_id__in=by_id) | Q(task_key__in=keys)
    )
    held_ids, held_keys = set(), set()
    for candidate_id, key in rows.values_list("candidate_id", "task_key"):
        held_ids.add(candidate_id)
        held_keys.add(key)
    return {pk for pk, c in by_id.items() if pk in held_ids or c.key in held_keys}


def task_states(candidates: Iterable[Candidate]) -> dict[int, TaskState]:
    chosen = list(candidates)
    held = held_out_anywhere(chosen)
    return {
        c.pk: TaskState(
            kept=c.status == Candidate.Status.KEPT,
            verifier_current=not c.verifier_stale,
            review=review_of(c),
            held_out=c.pk in held,
        )
        for c in chosen
    }


class Admission:
    """The rule applied to one behaviour's tasks for one use: which tasks and rollouts may be
    used, and the left-out counts by reason the manifest records."""

    def __init__(self, behaviour: Behaviour, use: Use, candidates: Iterable[Candidate]) -> None:
        self.policy = policy_for(behaviour, use)
        self.states = task_states(candidates)
        self.tasks_left_out: dict[int, tuple[Reason, ...]] = {}
        self.rollouts_left_out: list[tuple[Reason, ...]] = []
        for pk, state in self.states.items():
            why = task_refusals(state, self.policy)
            if why:
                self.tasks_left_out[pk] = why

    def task_ok(self, candidate_id: int) -> bool:
        return candidate_id in self.states and candidate_id not in self.tasks_left_out

    @property
    def admitted_tasks(self) -> list[int]:
        return [pk for pk in self.states if pk not in self.tasks_left_out]

    def rollout_ok(self, candidate_id: int, rollout: RolloutState) -> bool:
        """Whether the rollout may be used; a refused one is counted with its reasons."""
        state = self.states.get(candidate_id)
        if state is None:
            return False
        why = refusals(state, rollout, self.policy)
        if why:
            self.rollouts_left_out.append(why)
        return not why

    def manifest(self) -> dict[str, Any]:
        """The rule's inputs and what it left out, by reason."""
        return {
            "rule": rule_inputs(self.policy, VERIFIER_VERSION),
            "tasks_left_out": counted(self.tasks_left_out.values()),
            "rollouts_left_out": counted(self.rollouts_left_out),
        }

    def words(self) -> tuple[str, ...]:
        """Why tasks were left out, in words, for a refusal when nothing is left."""
        counts = counted(self.tasks_left_out.values())
        return tuple(
            f"{n} task{'s' if n > 1 else ''} left out: {WORDS[Reason(reason)]}"
            for reason, n in counts.items()
        )
