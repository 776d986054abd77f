"""Adapters, rollouts, verdicts and deployments in a given state, for the deploy core's tests:
plain dataclasses of ``training.core.deploy``, no rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from training.core.deploy.adapters import AdapterVersion
from training.core.deploy.gate import (
    GateThresholds,
    GateVerdict,
    RolloutOutcome,
    Side,
    evaluate_gate,
)
from training.core.deploy.route import Reason, RouteAnswer
from training.core.deploy.states import (
    Deployment,
    activate,
    approve,
    propose,
    restore_after_drill,
    start_drill,
)

AT = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
REPAIR = "failing-test-repair"
TAMPER = "no-test-tampering"
BASE_MODEL = "Qwen/Qwen2.5-Coder-7B-Instruct"
PLAN = GateThresholds(min_rollouts=4, min_pass_rate=0.6, tolerance=0.05)


def adapter(**overrides: Any) -> AdapterVersion:
    fields: dict[str, Any] = {
        "name": f"{REPAIR}-lora",
        "version": "1.0.0",
        "behaviour": REPAIR,
        "eval_suite": "repair-held-out",
        "base_model": BASE_MODEL,
        "training_plan": "plan-7",
        "dataset_sha256": "a" * 64,
        "artifact_uri": "s3://adapters/failing-test-repair-lora/1.0.0",
        "artifact_sha256": "b" * 64,
        "rank": 16,
        "registrar": "alice",
    }
    fields.update(overrides)
    return AdapterVersion(**fields)


def runs(
    behaviour: str, side: Side, passes: Iterable[bool], *, task: str = "t", per_task: int = 1
) -> list[RolloutOutcome]:
    """One outcome per entry of ``passes``, ``per_task`` rollouts to a task (t0, t1, ...)."""
    return [
        RolloutOutcome(
            task=f"{task}{i // per_task}",
            behaviour=behaviour,
            side=side,
            passed=ok,
            reward=1.0 if ok else 0.0,
            rollout=f"{side}-{behaviour}-{task}-{i}",
        )
        for i, ok in enumerate(passes)
    ]


def verdict_for(
    a: AdapterVersion, *, passed: bool = True, behaviours: Iterable[str] = (REPAIR,)
) -> GateVerdict:
    rows: list[RolloutOutcome] = []
    for behaviour in behaviours:
        rows += runs(behaviour, Side.BASE, [True] * 4)
        rows += runs(behaviour, Side.ADAPTER, [passed] * 4)
    return evaluate_gate(rows, adapter=a.key, gated=a.behaviour, thresholds=PLAN)


def base_answer(model: str = BASE_MODEL) -> RouteAnswer:
    return RouteAnswer(model=model, reason=Reason.KILLED)


def proposed(
    a: AdapterVersion | None = None, *, bp: Mapping[str, int] | None = None, ident: str = ""
) -> Deployment:
    a = a or adapter()
    return propose(a, proposer="bob", percentages=bp or {a.behaviour: 1000}, ident=ident)


def approved(d: Deployment | None = None, *, at: datetime = AT) -> Deployment:
    d = d or proposed()
    return approve(
        d,
        verdict=verdict_for(d.adapter, behaviours=d.requested),
        approver="carol",
        is_approver=True,
        at=at,
    )


def drilled(d: Deployment | None = None, *, at: datetime = AT) -> Deployment:
    d = approved(d, at=at) if d is None or d.approval is None else d
    killed = start_drill(d, at=at)
    return restore_after_drill(killed, answer=base_answer(), at=at + timedelta(milliseconds=40))


def active(d: Deployment | None = None, *, others: Iterable[Deployment] = ()) -> Deployment:
    return activate(drilled(d), active=others).deployment


def version(v: str, **overrides: Any) -> AdapterVersion:
    return replace(adapter(**overrides), version=v)
