"""Deciding a graded run's reward in the parent process, by the kit's own judging rules.

Nothing that ran inside the container decides a reward: the container's results folder is
copied out and read here. The rules (see ``kit/judging.py``) live in a standard-library-only
module that every task also carries in ``tests/``, so the task's own grader and the trial
matrix cannot drift apart; this module adapts them to the Docker seam's types.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..docker import ExecResult, FileEntry
from .kit.judging import (
    ERROR,
    FAILED,
    MAX_INVOCATIONS,
    MAX_RESULT_BYTES,
    PASSED,
    SKIPPED,
    CaseResult,
    ResultError,
    RunnerReport,
    Verdict,
    parse_junit,
    parse_unittest_json,
)
from .kit.judging import judge as _judge
from .kit.judging import read_reports as _read_reports
from .plan import GradingPlan

__all__ = [
    "ERROR",
    "FAILED",
    "MAX_INVOCATIONS",
    "MAX_RESULT_BYTES",
    "PASSED",
    "SKIPPED",
    "CaseResult",
    "ResultError",
    "RunnerReport",
    "Verdict",
    "judge",
    "parse_junit",
    "parse_unittest_json",
    "read_reports",
]


def read_reports(files: Mapping[str, FileEntry]) -> list[RunnerReport]:
    """The reports of every instrumented invocation in a copied-out results folder."""
    return _read_reports({name: entry.data for name, entry in files.items()})


def judge(
    result: ExecResult,
    reports: Iterable[RunnerReport],
    plan: GradingPlan,
    nonce: str,
    *,
    reference: Mapping[str, int] | None = None,
) -> Verdict:
    """The reward of one graded run (the rules are in ``kit/judging.py``)."""
    return _judge(
        result.exit_code,
        result.timed_out,
        result.seconds,
        reports,
        plan.structured,
        nonce,
        reference=reference,
    )
