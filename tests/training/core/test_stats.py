"""Aggregation over several rollouts per task, and the train / held-out split."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from training.core.stats import ScoredRollout, Split, aggregate, pass_at_k, split_of


def brute_force_pass_at_k(n: int, c: int, k: int) -> float:
    """Every k-subset of n rollouts (c passing) enumerated: the share holding a pass."""
    rollouts = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(rollouts[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 0, 1), (5, 1, 1), (5, 2, 3), (6, 3, 2), (8, 1, 8)])
def test_pass_at_k_is_the_unbiased_estimator(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(brute_force_pass_at_k(n, c, k))
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))


def test_pass_at_k_refuses_impossible_counts():
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def rollouts(task: str, rewards: list[float], **who) -> list[ScoredRollout]:
    return [ScoredRollout(task=task, reward=r, passed=r >= 1.0, **who) for r in rewards]


def test_groups_by_agent_and_split_with_pass_at_k_mean_and_spread():
    rows = [
        *rollouts("t1", [1, 1, 0], agent="oracle", split=Split.TRAIN),
        *rollouts("t2", [1, 0, 0], agent="oracle", split=Split.TRAIN),
        *rollouts("t3", [1, 1, 1], agent="oracle", split=Split.HELD_OUT),
        *rollouts("t1", [0, 0, 0.5], agent="nop", split=Split.TRAIN),
    ]
    groups = aggregate(rows, k=2, by=("agent", "split"))
    assert [g.key for g in groups] == [
        ("nop", Split.TRAIN),
        ("oracle", Split.HELD_OUT),
        ("oracle", Split.TRAIN),
    ]
    nop, held_out, train = groups
    assert (train.tasks, train.rollouts, train.passed) == (2, 6, 3)
    assert train.pass_at_1 == pytest.approx((2 / 3 + 1 / 3) / 2, abs=1e-4)
    assert train.pass_at_k == pytest.approx((1.0 + pass_at_k(3, 1, 2)) / 2, abs=1e-4)
    assert train.mean_reward == 0.5 and train.std_reward == 0.5  # population std of 1,1,0,1,0,0
    assert held_out.pass_at_1 == 1.0 and held_out.std_reward == 0.0
    assert nop.passed == 0 and nop.pass_at_k == 0.0
    assert nop.mean_reward == pytest.approx(0.1667, abs=1e-4)
    assert held_out.to_dict(("agent", "split"))["split"] == "held_out"


def test_tasks_with_fewer_than_k_rollouts_do_not_count_towards_pass_at_k():
    rows = [*rollouts("t1", [1, 0, 0, 0]), *rollouts("t2", [1])]
    (group,) = aggregate(rows, k=4, by=("agent",))
    assert group.tasks_below_k == 1
    assert group.pass_at_k == pytest.approx(1.0)  # t1 alone: one pass in four tries of four
    (short,) = aggregate(rollouts("t2", [1]), k=2, by=("agent",))
    assert short.pass_at_k is None


def test_forbidden_hits_and_self_reports_are_counted_per_rollout():
    rows = [
        ScoredRollout("t1", 0.0, False, forbidden_hits=2),
        ScoredRollout("t1", 0.0, False, self_report_only=True),
        ScoredRollout("t2", 1.0, True),
    ]
    (group,) = aggregate(rows, by=("model",))
    assert (group.forbidden_hits, group.self_report_only) == (1, 1)


def test_grouping_by_an_unknown_field_is_refused():
    with pytest.raises(ValueError, match="cannot group by"):
        aggregate([], by=("colour",))


def test_the_split_is_deterministic_and_close_to_the_fraction():
    keys = [f"task-{i}" for i in range(20_000)]
    first = [split_of(k, "failing-test-repair", 0.3) for k in keys]
    assert first == [split_of(k, "failing-test-repair", 0.3) for k in keys]
    share = Counter(first)[Split.HELD_OUT] / len(keys)
    assert 0.28 < share < 0.32  # 0.294 for these keys; the hash is fixed, so is the share
    other = [split_of(k, "read-before-edit", 0.3) for k in keys]
    assert other != first  # each behaviour draws its own held-out set


def test_a_tasks_split_does_not_depend_on_the_other_tasks():
    alone = split_of("sample-7", "no-test-tampering")
    assert all(split_of("sample-7", "no-test-tampering") == alone for _ in range(3))
    assert split_of("x", "b", 0.0) is Split.TRAIN and split_of("x", "b", 1.0) is Split.HELD_OUT
    with pytest.raises(ValueError):
        split_of("x", "b", 1.5)
