"""Why candidates are ungraded, grouped by cause with counts (no Docker, no database)."""

from __future__ import annotations

from datetime import UTC, datetime

from tasks_review.core.trials import MatrixStatus, Role, TrialRecord, TrialStatus, decide
from tasks_review.core.trials.ungraded import NO_REASON, ReasonCount, by_candidate, by_trial

GONE = "the daemon went away"


def ungraded(role: Role, repeat: int, error: str) -> TrialRecord:
    now = datetime.now(UTC)
    return TrialRecord(
        role,
        str(role),
        repeat,
        None,
        1.0 if role is Role.ORACLE else 0.0,
        TrialStatus.UNGRADED,
        now,
        now,
        0.0,
        detail={"infra_error": error} if error else {},
    )


def test_one_failure_across_a_matrix_is_one_cause_counted_per_trial():
    status, reasons = decide(
        [ungraded(Role.ORACLE, 0, GONE), ungraded(Role.ORACLE, 1, GONE), ungraded(Role.NOOP, 0, "")]
    )
    assert status is MatrixStatus.UNGRADED
    assert by_trial(reasons) == (ReasonCount(GONE, 2), ReasonCount(NO_REASON, 1))


def test_a_reason_naming_no_trial_is_its_own_cause():
    harness = "harness error: KeyError: 'x'"
    assert by_trial([harness]) == (ReasonCount(harness, 1),)


def test_a_candidate_without_recorded_reasons_reads_no_reason_recorded():
    assert by_trial([]) == (ReasonCount(NO_REASON, 1),)


def test_a_runs_causes_count_candidates_biggest_first():
    oracle_gone = [f"oracle #{i} ungraded: {GONE}" for i in range(3)]
    noop_gone = [f"noop #0 ungraded: {GONE}"]
    reasons = by_candidate([oracle_gone, noop_gone, ["harness error: boom"], []])
    assert reasons == (
        ReasonCount(GONE, 2),
        ReasonCount("harness error: boom", 1),
        ReasonCount(NO_REASON, 1),
    )
    assert reasons[0].to_dict() == {"reason": GONE, "count": 2}
