"""Several rollouts per task: pass@k, mean and spread of reward, per agent and per split.

rows = [ScoredRollout(task="t1", reward=1.0, passed=True, agent="oracle", split=Split.HELD_OUT), …]
groups = aggregate(rows, k=5)
groups[0].pass_at_1, groups[0].pass_at_k, groups[0].mean_reward, groups[0].std_reward

pass@k is the unbiased estimator of Chen et al. (2021, "Evaluating Large Language Models
Trained on Code"): for a task with n rollouts of which c passed, 1 - C(n-c, k) / C(n, k),
averaged over the tasks that have at least k rollouts (a task with fewer says nothing about
k tries; ``tasks_below_k`` counts them). pass@1 is the same estimator at k = 1, the mean
per-task pass rate. The spread of reward is the population standard deviation over every
rollout in the group (the rollouts are the whole population being described, not a sample of
a larger one).

Splits: ``split_of(task_key, behaviour)`` puts a task in train or held-out from a hash of the
behaviour's slug and a stable task key, so the same inputs always give the same split and a
task's split never depends on which other tasks exist. The database records the split once,
when the task joins the behaviour, and never moves it: changing the fraction later only
affects tasks that join afterwards.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

DEFAULT_HELD_OUT_FRACTION = 0.3


class Split(StrEnum):
    TRAIN = "train"
    HELD_OUT = "held_out"


def split_of(
    task_key: str, behaviour: str, held_out_fraction: float = DEFAULT_HELD_OUT_FRACTION
) -> Split:
    """The split of one task for one behaviour; deterministic, independent of other tasks."""
    if not 0 <= held_out_fraction <= 1:
        raise ValueError(f"held_out_fraction must be within 0..1, not {held_out_fraction}")
    digest = hashlib.sha256(f"{behaviour}\x00{task_key}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64
    return Split.HELD_OUT if position < held_out_fraction else Split.TRAIN


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k rollouts drawn from n (c of them passing) passes."""
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    # The product form of 1 - C(n-c, k) / C(n, k): exact enough and never builds huge integers.
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


@dataclass(frozen=True, slots=True)
class ScoredRollout:
    """One scored rollout: the task it attempted, who attempted it, and its result."""

    task: str
    reward: float
    passed: bool
    agent: str = ""
    model: str = ""
    adapter: str = ""
    prompt_version: str = ""
    split: Split | None = None
    forbidden_hits: int = 0
    self_report_only: bool = False


GROUP_FIELDS = ("agent", "model", "adapter", "prompt_version", "split")


@dataclass(frozen=True, slots=True)
class GroupStats:
    key: tuple[Any, ...]  # the values of ``by`` for this group
    tasks: int
    rollouts: int
    passed: int
    pass_at_1: float
    k: int
    pass_at_k: float | None  # None when no task has k rollouts
    tasks_below_k: int
    mean_reward: float
    std_reward: float
    forbidden_hits: int  # rollouts with at least one forbidden hit
    self_report_only: int

    def to_dict(self, by: Sequence[str] = GROUP_FIELDS) -> dict[str, Any]:
        out: dict[str, Any] = {
            name: (str(value) if value is not None else None)
            for name, value in zip(by, self.key, strict=True)
        }
        out |= {
            "tasks": self.tasks,
            "rollouts": self.rollouts,
            "passed": self.passed,
            "pass_at_1": self.pass_at_1,
            "k": self.k,
            "pass_at_k": self.pass_at_k,
            "tasks_below_k": self.tasks_below_k,
            "mean_reward": self.mean_reward,
            "std_reward": self.std_reward,
            "forbidden_hits": self.forbidden_hits,
            "self_report_only": self.self_report_only,
        }
        return out


def aggregate(
    outcomes: Iterable[ScoredRollout], *, k: int = 1, by: Sequence[str] = GROUP_FIELDS
) -> list[GroupStats]:
    """One row per distinct value of ``by`` (e.g. agent x split), sorted by that key."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    unknown = [name for name in by if name not in GROUP_FIELDS]
    if unknown:
        raise ValueError(f"cannot group by {unknown}: choose from {list(GROUP_FIELDS)}")
    groups: dict[tuple[Any, ...], list[ScoredRollout]] = defaultdict(list)
    for outcome in outcomes:
        groups[tuple(getattr(outcome, name) for name in by)].append(outcome)
    return [summarise(key, rows, k) for key, rows in sorted(groups.items(), key=_sort_key)]


def summarise(key: tuple[Any, ...], rows: Sequence[ScoredRollout], k: int) -> GroupStats:
    by_task: dict[str, list[ScoredRollout]] = defaultdict(list)
    for row in rows:
        by_task[row.task].append(row)
    rates = [sum(r.passed for r in task) / len(task) for task in by_task.values()]
    eligible = [task for task in by_task.values() if len(task) >= k]
    at_k = [pass_at_k(len(task), sum(r.passed for r in task), k) for task in eligible]
    rewards = [row.reward for row in rows]
    mean = sum(rewards) / len(rewards)
    return GroupStats(
        key=key,
        tasks=len(by_task),
        rollouts=len(rows),
        passed=sum(row.passed for row in rows),
        pass_at_1=round(sum(rates) / len(rates), 4),
        k=k,
        pass_at_k=round(sum(at_k) / len(at_k), 4) if at_k else None,
        tasks_below_k=len(by_task) - len(eligible),
        mean_reward=round(mean, 4),
        std_reward=round(math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards)), 4),
        forbidden_hits=sum(1 for row in rows if row.forbidden_hits),
        self_report_only=sum(1 for row in rows if row.self_report_only),
    )


def _sort_key(item: tuple[tuple[Any, ...], list[ScoredRollout]]) -> tuple[str, ...]:
    return tuple("" if value is None else str(value) for value in item[0])
