"""The held-out gate: an adapter against the base agent on the same held-out tasks.

>>> rows = [RolloutOutcome(f"t{i}", "failing-test-repair", side, passed=ok, reward=float(ok))
...         for i in range(4) for side, ok in ((Side.ADAPTER, True), (Side.BASE, i < 2))]
>>> rows += [RolloutOutcome(f"t{i}", "no-test-tampering", side, passed=side is Side.BASE,
...                         reward=1.0) for i in range(4) for side in Side]
>>> plan = GateThresholds(min_rollouts=4, min_pass_rate=0.6, tolerance=0.05)
>>> verdict = evaluate_gate(rows, adapter="failing-test-repair-lora@1.0",
...                         gated="failing-test-repair", thresholds=plan)
>>> verdict.passed
False
>>> [(row.behaviour, row.adapter.pass_rate, row.base.pass_rate, row.passed) for row in verdict.rows]
[('failing-test-repair', 1.0, 0.5, True), ('no-test-tampering', 0.0, 1.0, False)]
>>> print(verdict.rows[1].failures[0].message)  # doctest: +NORMALIZE_WHITESPACE
the adapter passes 0% of no-test-tampering's held-out tasks against the base agent's 100%:
100 points worse, beyond the tolerance of 5 points

The input is one row per (rollout, behaviour scored): a rollout of a held-out task is scored
against every behaviour whose spec covers that task, so a gain on the gated behaviour cannot hide
a regression on another. Selecting held-out tasks is the caller's job (the splits live in the
database); this module only compares.

Rules, per behaviour:
- only tasks both sides ran count (the same held-out tasks); rollouts on the others are
  left out and counted, so the page can say so;
- each side needs at least ``min_rollouts`` rollouts on those tasks;
- on the gated behaviour, the adapter's pass rate is at least ``min_pass_rate``;
- on every behaviour, the adapter's pass rate is not below the base agent's by more than
  ``tolerance`` (exactly at the tolerance passes).

A pass rate is the mean over tasks of each task's passing fraction (pass@1, as the harness
reports it), so a side cannot lift its rate by running an easy task many times. Rates are
compared as exact fractions and thresholds read as the decimals they were written as, so
0.8 - 0.2 against 0.6 is a tie, not a float rounding accident.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any


class Side(StrEnum):
    ADAPTER = "adapter"
    BASE = "base"


class Rule(StrEnum):
    """Which rule a behaviour's row failed; the message words it for the approval page."""

    NO_SHARED_TASKS = "no_shared_tasks"
    TOO_FEW_ROLLOUTS = "too_few_rollouts"
    BELOW_MINIMUM = "below_minimum"
    REGRESSION = "regression"


@dataclass(frozen=True, slots=True)
class RolloutOutcome:
    task: str
    behaviour: str
    side: Side
    passed: bool
    reward: float
    rollout: str = ""  # the rollout's id, so the page can link to it


@dataclass(frozen=True, slots=True)
class GateThresholds:
    """The training plan's promotion gate."""

    min_rollouts: int  # per side, per behaviour, on the tasks both sides ran
    min_pass_rate: float  # the adapter's, on the gated behaviour
    tolerance: float  # how far below the base agent's pass rate the adapter may fall

    def __post_init__(self) -> None:
        if isinstance(self.min_rollouts, bool) or not isinstance(self.min_rollouts, int):
            raise ValueError("min_rollouts must be an integer")
        if self.min_rollouts < 1:
            raise ValueError(
                "min_rollouts must be at least 1: a gate with no rollouts decides nothing"
            )
        for name in ("min_pass_rate", "tolerance"):
            if not 0 <= _exact(getattr(self, name)) <= 1:
                raise ValueError(f"{name} must be within 0..1, not {getattr(self, name)}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "min_rollouts": self.min_rollouts,
            "min_pass_rate": self.min_pass_rate,
            "tolerance": self.tolerance,
        }


def loosened(proposed: GateThresholds, floor: GateThresholds) -> list[str]:
    """Where ``proposed`` is looser than the floors an admin set (fewer rollouts, a lower pass
    rate, a wider tolerance), in words; empty when it only tightens them.

    >>> floor = GateThresholds(min_rollouts=5, min_pass_rate=0.5, tolerance=0.05)
    >>> loosened(GateThresholds(min_rollouts=8, min_pass_rate=0.6, tolerance=0.0), floor)
    []
    >>> loosened(GateThresholds(min_rollouts=3, min_pass_rate=0.5, tolerance=1.0), floor)
    ['at least 5 rollouts a side, not 3', 'a tolerance of at most 5 points, not 100']
    """
    problems = []
    if proposed.min_rollouts < floor.min_rollouts:
        problems.append(
            f"at least {floor.min_rollouts} rollouts a side, not {proposed.min_rollouts}"
        )
    if _exact(proposed.min_pass_rate) < _exact(floor.min_pass_rate):
        problems.append(
            f"a minimum pass rate of at least {_points(_exact(floor.min_pass_rate))}%, "
            f"not {_points(_exact(proposed.min_pass_rate))}%"
        )
    if _exact(proposed.tolerance) > _exact(floor.tolerance):
        problems.append(
            f"a tolerance of at most {_points(_exact(floor.tolerance))} points, "
            f"not {_points(_exact(proposed.tolerance))}"
        )
    return problems


def strictest(a: GateThresholds, b: GateThresholds) -> GateThresholds:
    """Each threshold at the stricter of the two: what a gate applies when the floors were
    raised after a proposal."""
    return GateThresholds(
        min_rollouts=max(a.min_rollouts, b.min_rollouts),
        min_pass_rate=max(a.min_pass_rate, b.min_pass_rate, key=_exact),
        tolerance=min(a.tolerance, b.tolerance, key=_exact),
    )


@dataclass(frozen=True, slots=True)
class Failure:
    rule: Rule
    message: str


@dataclass(frozen=True, slots=True)
class SideStats:
    rollouts: int
    passed: int
    pass_rate: float | None  # None when the side has no rollout on the shared tasks
    mean_reward: float | None
    rollout_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "mean_reward": self.mean_reward,
            "rollout_ids": list(self.rollout_ids),
        }


@dataclass(frozen=True, slots=True)
class BehaviourRow:
    behaviour: str
    gated: bool  # the behaviour the adapter was trained for (the minimum pass rate applies)
    tasks: int  # held-out tasks both sides ran
    adapter: SideStats
    base: SideStats
    delta: float | None  # adapter minus base pass rate
    left_out: int  # rollouts on tasks only one side ran
    failures: tuple[Failure, ...]

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "behaviour": self.behaviour,
            "gated": self.gated,
            "tasks": self.tasks,
            "adapter": self.adapter.to_dict(),
            "base": self.base.to_dict(),
            "delta": self.delta,
            "left_out": self.left_out,
            "passed": self.passed,
            "failures": [{"rule": str(f.rule), "message": f.message} for f in self.failures],
        }


@dataclass(frozen=True, slots=True)
class GateVerdict:
    adapter: str  # the adapter version's key the rollouts were of
    gated: str  # the behaviour it was trained for
    thresholds: GateThresholds
    rows: tuple[BehaviourRow, ...]  # the gated behaviour first, then the others by slug

    @property
    def passed(self) -> bool:
        return all(row.passed for row in self.rows)

    @property
    def behaviours(self) -> frozenset[str]:
        """The behaviours the gate measured (a rollout may only reach these)."""
        return frozenset(row.behaviour for row in self.rows)

    def failures(self) -> list[str]:
        return [f"{row.behaviour}: {f.message}" for row in self.rows for f in row.failures]

    def summary(self) -> str:
        if self.passed:
            return f"passed on {len(self.rows)} behaviour(s)"
        return "; ".join(self.failures())

    def to_dict(self) -> dict[str, Any]:
        """JSON for the approval record: the numbers the approver saw."""
        return {
            "adapter": self.adapter,
            "gated": self.gated,
            "passed": self.passed,
            "thresholds": self.thresholds.to_dict(),
            "rows": [row.to_dict() for row in self.rows],
        }


def evaluate_gate(
    outcomes: Iterable[RolloutOutcome],
    *,
    adapter: str,
    gated: str,
    thresholds: GateThresholds,
) -> GateVerdict:
    """The verdict on ``outcomes`` (adapter and base rollouts of held-out tasks, one row per
    behaviour each was scored against) for the adapter trained for behaviour ``gated``."""
    by_behaviour: dict[str, list[RolloutOutcome]] = defaultdict(list)
    scored: set[tuple[str, str]] = set()
    for outcome in outcomes:
        # A rollout counted twice (a join gone wrong upstream) would tilt the verdict silently.
        if outcome.rollout:
            if (outcome.rollout, outcome.behaviour) in scored:
                raise ValueError(
                    f"rollout {outcome.rollout} is scored twice for {outcome.behaviour}"
                )
            scored.add((outcome.rollout, outcome.behaviour))
        by_behaviour[outcome.behaviour].append(outcome)
    by_behaviour.setdefault(gated, [])
    order = [gated] + sorted(b for b in by_behaviour if b != gated)
    rows = tuple(
        _row(behaviour, by_behaviour[behaviour], behaviour == gated, thresholds)
        for behaviour in order
    )
    return GateVerdict(adapter=adapter, gated=gated, thresholds=thresholds, rows=rows)


def _row(
    behaviour: str, outcomes: Sequence[RolloutOutcome], gated: bool, thresholds: GateThresholds
) -> BehaviourRow:
    tasks: dict[Side, dict[str, list[RolloutOutcome]]] = {side: defaultdict(list) for side in Side}
    for outcome in outcomes:
        tasks[Side(outcome.side)][outcome.task].append(outcome)
    shared = sorted(set(tasks[Side.ADAPTER]) & set(tasks[Side.BASE]))
    left_out = sum(
        len(rows) for side in Side for task, rows in tasks[side].items() if task not in shared
    )
    adapter_rate, adapter = _side([tasks[Side.ADAPTER][t] for t in shared])
    base_rate, base = _side([tasks[Side.BASE][t] for t in shared])

    failures: list[Failure] = []
    if not shared:
        failures.append(
            Failure(
                Rule.NO_SHARED_TASKS,
                f"no held-out task of {behaviour} was run by both the adapter and the base agent",
            )
        )
    elif min(adapter.rollouts, base.rollouts) < thresholds.min_rollouts:
        failures.append(
            Failure(
                Rule.TOO_FEW_ROLLOUTS,
                f"too few rollouts on the {len(shared)} shared held-out task(s): the adapter has "
                f"{adapter.rollouts}, the base agent {base.rollouts}; each side needs at least "
                f"{thresholds.min_rollouts}",
            )
        )
    delta: Fraction | None = None
    if adapter_rate is not None and base_rate is not None:
        delta = adapter_rate - base_rate
        minimum = _exact(thresholds.min_pass_rate)
        if gated and adapter_rate < minimum:
            failures.append(
                Failure(
                    Rule.BELOW_MINIMUM,
                    f"the adapter passes {_percent(adapter_rate)} of {behaviour}'s held-out "
                    f"tasks, below the plan's minimum of {_percent(minimum)}",
                )
            )
        tolerance = _exact(thresholds.tolerance)
        if delta < -tolerance:
            failures.append(
                Failure(
                    Rule.REGRESSION,
                    f"the adapter passes {_percent(adapter_rate)} of {behaviour}'s held-out tasks "
                    f"against the base agent's {_percent(base_rate)}: {_points(-delta)} points "
                    f"worse, beyond the tolerance of {_points(tolerance)} points",
                )
            )
    return BehaviourRow(
        behaviour=behaviour,
        gated=gated,
        tasks=len(shared),
        adapter=adapter,
        base=base,
        delta=None if delta is None else float(delta),
        left_out=left_out,
        failures=tuple(failures),
    )


def _side(per_task: Sequence[Sequence[RolloutOutcome]]) -> tuple[Fraction | None, SideStats]:
    rollouts = [row for task in per_task for row in task]
    if not per_task:
        return None, SideStats(0, 0, None, None, ())
    rate = sum((Fraction(sum(r.passed for r in task), len(task)) for task in per_task), Fraction())
    rate /= len(per_task)
    reward = sum(sum(r.reward for r in task) / len(task) for task in per_task) / len(per_task)
    stats = SideStats(
        rollouts=len(rollouts),
        passed=sum(r.passed for r in rollouts),
        pass_rate=float(rate),
        mean_reward=round(reward, 4),
        rollout_ids=tuple(sorted(r.rollout for r in rollouts if r.rollout)),
    )
    return rate, stats


def _exact(value: float | int | str | Fraction) -> Fraction:
    # str() first: Fraction(0.1) is 3602879701896397/36028797018963968, Fraction("0.1") is 1/10.
    return Fraction(str(value))


def _percent(value: Fraction) -> str:
    return f"{_points(value)}%"


def _points(value: Fraction) -> str:
    return f"{float(value * 100):.1f}".removesuffix(".0")
