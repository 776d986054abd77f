"""Deciding a graded run's reward in the parent process, by the kit's own judging rules.

Nothing the graded code could write decides a reward: the task's grader (root, in the verifier
container) records what every instrumented runner reported over its socket as session records
(``traj2env/sessions.jsonl``), which are copied out and judged again here. The rules (see
``kit/judging.py``) live in a standard-library-only module that every task also carries in
``tests/``, so the task's own grader and the trial matrix cannot drift apart; this module adapts
them to the Docker seam's types.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from groundwork.core.docker import ExecResult, FileEntry

from .kit.judging import (
    ERROR,
    FAILED,
    MAX_SESSIONS,
    NODE_TEST,
    PASSED,
    PYTEST,
    SKIPPED,
    UNITTEST,
    Judgement,
    judge_sessions,
)
from .plan import GradingPlan

__all__ = [
    "ERROR",
    "FAILED",
    "NODE_TEST",
    "PASSED",
    "PYTEST",
    "SESSIONS",
    "SKIPPED",
    "UNITTEST",
    "Judgement",
    "judge_graded_run",
    "read_probe_results",
    "read_sessions",
]

SESSIONS = "traj2env/sessions.jsonl"
PROBE_RESULTS = "traj2env/probe_results.json"


def read_sessions(files: Mapping[str, FileEntry]) -> list[dict[str, Any]]:
    """The session records the task's grader wrote, from a copied-out verifier folder."""
    entry = files.get(SESSIONS)
    if entry is None:
        return []
    sessions = []
    for line in entry.data.decode("utf-8", "replace").splitlines()[:MAX_SESSIONS]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            sessions.append(record)
    return sessions


def read_probe_results(files: Mapping[str, FileEntry]) -> dict[str, Any]:
    """What the probe runner gave, as the task's grader recorded it; {} when missing (then every
    probe counts as failed)."""
    entry = files.get(PROBE_RESULTS)
    try:
        ran = json.loads(entry.data) if entry else None
    except (ValueError, RecursionError):
        ran = None
    return ran if isinstance(ran, dict) else {"error": "the grader recorded no probe results"}


def judge_graded_run(
    result: ExecResult,
    sessions: Iterable[Mapping[str, Any]],
    plan: GradingPlan,
    *,
    reference: Mapping[str, int] | None = None,
    findings: Iterable[str] = (),
    baseline: bool = False,
    reward: str = "all",
    start_failed: Iterable[str] = (),
    probes: Mapping[str, Any] | None = None,
) -> Judgement:
    """The reward of one graded run (the rules are in ``kit/judging.py``); ``reward`` is the
    task's mode ("all", or "fraction" of its ``start_failed`` tests)."""
    return judge_sessions(
        result.exit_code,
        result.timed_out,
        result.seconds,
        sessions,
        plan.structured,
        reference=reference,
        findings=tuple(findings),
        baseline=baseline,
        reward=reward,
        start_failed=tuple(start_failed),
        probes=probes,
    )
