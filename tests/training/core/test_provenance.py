"""The one provenance rule, on plain states: what keeps a rollout out of training and gates."""

from __future__ import annotations

import doctest

import pytest

from training.core import provenance
from training.core.provenance import (
    Policy,
    Reason,
    Review,
    RolloutState,
    TaskState,
    Use,
    counted,
    refusals,
    task_refusals,
)

GOOD = TaskState(kept=True, verifier_current=True, review=Review.ACCEPTED, held_out=False)
GRADED = RolloutState(graded=True, reward=1.0, evaluated=True, eval_reward=1.0)
TRAIN, GATE = Policy(Use.TRAIN), Policy(Use.GATE)


def task(**changes) -> TaskState:
    return TaskState(**{**GOOD.__dict__, **changes})


def test_an_accepted_current_train_task_with_a_current_eval_trains():
    assert refusals(GOOD, GRADED, TRAIN) == ()


@pytest.mark.parametrize(
    ("review", "reason"),
    [
        (Review.REJECTED, Reason.REJECTED),
        (Review.NEEDS_FIX, Reason.NEEDS_FIX),
        (Review.PENDING, Reason.UNREVIEWED),
        (Review.DISPUTED, Reason.UNREVIEWED),
    ],
)
def test_a_task_not_accepted_on_the_desk_neither_trains_nor_gates(review, reason):
    assert task_refusals(task(review=review), TRAIN) == (reason,)
    assert task_refusals(task(review=review, held_out=True), GATE) == (reason,)


def test_pending_tasks_count_only_where_the_behaviour_opted_in_but_rejected_never():
    opted = Policy(Use.TRAIN, allow_unreviewed=True)
    assert task_refusals(task(review=Review.PENDING), opted) == ()
    assert task_refusals(task(review=Review.REJECTED), opted) == (Reason.REJECTED,)
    assert task_refusals(task(review=Review.NEEDS_FIX), opted) == (Reason.NEEDS_FIX,)


def test_an_authored_task_stands_reviewed_by_its_author():
    assert task_refusals(task(review=Review.AUTHORED), TRAIN) == ()


def test_a_task_kept_by_an_older_verifier_or_no_longer_kept_is_out():
    assert task_refusals(task(verifier_current=False), TRAIN) == (Reason.VERIFIER_STALE,)
    assert task_refusals(task(kept=False), TRAIN) == (Reason.NOT_KEPT,)


def test_held_out_anywhere_never_trains_and_the_gate_takes_only_held_out_tasks():
    assert task_refusals(task(held_out=True), TRAIN) == (Reason.HELD_OUT,)
    assert task_refusals(task(held_out=True), GATE) == ()
    assert task_refusals(GOOD, GATE) == (Reason.NOT_HELD_OUT,)


def test_an_eval_result_computed_on_an_older_reward_is_stale():
    regraded = RolloutState(graded=True, reward=0.0, evaluated=True, eval_reward=1.0)
    assert refusals(GOOD, regraded, TRAIN) == (Reason.EVAL_STALE,)
    unknown = RolloutState(graded=True, reward=1.0, evaluated=True, eval_reward=None)
    assert refusals(GOOD, unknown, TRAIN) == (Reason.EVAL_STALE,)
    unscored = RolloutState(graded=True, reward=1.0)  # the gate scores now: no result to age
    assert refusals(GOOD, unscored, GATE) == (Reason.NOT_HELD_OUT,)
    assert refusals(task(held_out=True), unscored, GATE) == ()


def test_an_ungraded_rollout_is_out():
    assert refusals(GOOD, RolloutState(graded=False, reward=None), TRAIN) == (Reason.NOT_GRADED,)


def test_counts_take_each_left_out_row_once_by_its_first_reason():
    rows = [(Reason.REJECTED, Reason.HELD_OUT), (Reason.HELD_OUT,), (), (Reason.HELD_OUT,)]
    assert counted(rows) == {"held_out": 2, "review_rejected": 1}


def test_the_examples_in_the_module_run():
    failures, tried = doctest.testmod(provenance, report=False)
    assert tried and not failures
