"""Fractional rewards (kit/judging.py, ``reward="fraction"``): build and extend tasks score the
share of their hidden tests that pass; deleting, skipping or forging tests never earns more."""

from __future__ import annotations

import pytest

from groundwork.core.docker import ExecResult
from tasks_review.core.trials import judge_graded_run, plan_check

OK = ExecResult(0, "", "", 0.1)
FAILED_RUN = ExecResult(1, "", "", 0.1)
TIMED_OUT = ExecResult(None, "", "", 120.0, timed_out=True)
PLAN = plan_check("python3 -m unittest discover -s tests", ".", {})
HIDDEN = ["t.T.test_a", "t.T.test_b", "t.T.test_c", "t.T.test_d"]  # failed at the start
OLD = ["t.T.test_old"]  # passed at the start too: must keep passing
REFERENCE = dict.fromkeys([*HIDDEN, *OLD], 1)
# Copies of test_a and test_b, verbatim and with an assertion made false.
COPIES = {
    "test_aaaaaaaaaaaaaa": {"of": "t.T.test_a", "fail": False},
    "test_bbbbbbbbbbbbbb": {"of": "t.T.test_b", "fail": False},
    "test_cccccccccccccc": {"of": "t.T.test_a", "fail": True},
    "test_dddddddddddddd": {"of": "t.T.test_b", "fail": True},
}


def session(outcomes: dict[str, str], copies: dict[str, str], **extra) -> dict:
    """A unittest session: real outcomes by test id, copy outcomes by copy name."""
    cases = [[i, o] for i, o in outcomes.items()]
    cases += [[f"t.T.{name}", o] for name, o in copies.items()]
    return {
        "kind": "unittest",
        "argv": ["python -m unittest"],
        "complete": True,
        "problems": [],
        "cases": cases,
        "copies": {k: v for k, v in COPIES.items() if k in copies},
        **extra,
    }


def honest(outcomes: dict[str, str]) -> dict:
    """What honest copies do: verbatim ones as their test, falsified ones fail (when it passed)."""
    copies = {}
    for name, control in COPIES.items():
        real = outcomes.get(control["of"])
        if real is None:
            continue
        copies[name] = "failed" if control["fail"] else real
    return session(outcomes, copies)


def judge(records, run=FAILED_RUN, **options):
    return judge_graded_run(
        run,
        records,
        PLAN,
        reference=REFERENCE,
        reward="fraction",
        start_failed=HIDDEN,
        **options,
    )


PARTIAL = {"t.T.test_old": "passed", "t.T.test_a": "passed", "t.T.test_b": "failed"}
PARTIAL |= {"t.T.test_c": "passed", "t.T.test_d": "error"}


def test_every_hidden_test_passing_scores_exactly_one():
    verdict = judge([honest(dict.fromkeys(REFERENCE, "passed"))], run=OK)
    assert verdict.reward == 1.0 and verdict.reasons == ()
    assert verdict.score == {
        "mode": "fraction",
        "scored": 4,
        "probed": None,  # a check-only task: no probe to count
        "passed": 2 + 2,
        "kept": 1,
        "kept_failed": 0,
        "missed": [],
    }


def test_a_partial_solution_scores_the_share_of_hidden_tests_it_passes():
    verdict = judge([honest(PARTIAL)])
    assert verdict.reward == 0.5
    assert verdict.score["missed"] == ["t.T.test_b", "t.T.test_d"]
    assert any("did not pass" in r for r in verdict.reasons)  # why it is not 1


def test_a_verbatim_copy_of_a_test_that_fails_honestly_fails_too_and_is_no_forgery():
    # test_b fails; its verbatim copy fails with it and its falsified copy may pass or fail.
    record = honest(PARTIAL)
    for outcome in ("passed", "failed"):
        record["cases"] = [
            c if c[0] != "t.T.test_dddddddddddddd" else [c[0], outcome] for c in record["cases"]
        ]
        assert judge([record]).reward == 0.5


@pytest.mark.parametrize(
    "outcomes, reward",
    [
        # Deleting the failing hidden tests: restored, or missing they count as failed.
        ({"t.T.test_old": "passed", "t.T.test_a": "passed", "t.T.test_c": "passed"}, 0.5),
        # Skipping them: a skipped test did not pass.
        (PARTIAL | {"t.T.test_b": "skipped", "t.T.test_d": "skipped"}, 0.5),
        # Skipping every test the submission fails and some it passes: still no more.
        (PARTIAL | {"t.T.test_b": "skipped", "t.T.test_c": "skipped"}, 0.25),
        # Skipping everything: nothing passed.
        (dict.fromkeys(REFERENCE, "skipped"), 0.0),
        # Running nothing at all.
        ({}, 0.0),
    ],
)
def test_deleting_or_skipping_hidden_tests_never_raises_the_share(outcomes, reward):
    assert judge([honest(outcomes)]).reward == reward


def test_an_existing_test_that_no_longer_passes_scores_zero():
    verdict = judge([honest(dict.fromkeys(REFERENCE, "passed") | {"t.T.test_old": "failed"})])
    assert verdict.reward == 0.0 and verdict.score["kept_failed"] == 1
    assert any("passed at the start no longer pass" in r for r in verdict.reasons)


def test_forged_passes_are_caught_by_the_copies_and_score_zero():
    # Every failure reported as a pass (an in-process forgery): the falsified copy of test_b
    # "passed" too, where a passing test_b's falsified copy must fail.
    forged = session(
        dict.fromkeys(REFERENCE, "passed"),
        dict.fromkeys(COPIES, "passed"),
    )
    verdict = judge([forged])
    assert verdict.reward == 0.0 and any("forged in-process" in r for r in verdict.reasons)
    # Sparing the copies (they run honestly) while forging the real test_b: its verbatim copy
    # fails where the test "passed".
    spared = session(
        PARTIAL | {"t.T.test_b": "passed"},
        {
            "test_aaaaaaaaaaaaaa": "passed",
            "test_bbbbbbbbbbbbbb": "failed",
            "test_cccccccccccccc": "failed",
            "test_dddddddddddddd": "passed",
        },
    )
    verdict = judge([spared])
    assert verdict.reward == 0.0 and any("verbatim copy" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"complete": False}, "ended before the runner finished"),
        ({"problems": ["t.T.test_a was reported twice"]}, "reported twice"),
    ],
)
def test_a_run_whose_results_cannot_be_trusted_scores_zero_not_a_share(change, fragment):
    record = honest(PARTIAL) | change
    verdict = judge([record])
    assert verdict.reward == 0.0 and any(fragment in r for r in verdict.reasons)


def test_a_tampering_finding_or_a_timeout_scores_zero_not_a_share():
    assert (
        judge([honest(PARTIAL)], findings=["tests/t.py was changed during the check"]).reward == 0
    )
    assert judge([honest(PARTIAL)], run=TIMED_OUT).reward == 0.0


def test_without_the_reference_the_check_in_the_image_judges_all_or_nothing():
    # The check in the image has no facts yet: a partial run is simply not a pass.
    verdict = judge_graded_run(
        FAILED_RUN, [honest(PARTIAL)], PLAN, baseline=True, reward="fraction"
    )
    assert verdict.reward == 0.0 and verdict.score == {}


def test_repair_keeps_its_all_or_nothing_rule():
    verdict = judge_graded_run(FAILED_RUN, [honest(PARTIAL)], PLAN, reference=REFERENCE)
    assert verdict.reward == 0.0 and verdict.score == {}
