"""Session records and the reward rules (results.py over kit/judging.py), without Docker."""

from __future__ import annotations

import json

from groundwork.core.docker import ExecResult, FileEntry
from tasks_review.core.trials import judge_graded_run, plan_check, read_sessions
from tasks_review.core.trials.kit import judging

OK = ExecResult(0, "", "", 0.1)
FAILED_RUN = ExecResult(1, "", "", 0.1)
PLAN = plan_check("python3 -m unittest discover -s tests", ".", {})
COPIES = {
    "test_qwertyuiopasdf": {"of": "t.T.test_a", "fail": False},
    "test_zxcvbnmlkjhgfd": {"of": "t.T.test_a", "fail": True},
}


def session(*cases, copies=COPIES, kind="unittest", complete=True, **extra) -> dict:
    return {
        "kind": kind,
        "argv": ["python -m unittest"],
        "complete": complete,
        "problems": [],
        "cases": [list(c) for c in cases],
        "copies": copies,
        **extra,
    }


def controls(pass_outcome: str = "passed", fail_outcome: str = "failed") -> list[tuple[str, str]]:
    return [("t.T.test_qwertyuiopasdf", pass_outcome), ("t.T.test_zxcvbnmlkjhgfd", fail_outcome)]


# -- session records -------------------------------------------------------------------------------


def test_session_records_are_read_from_the_graders_file_and_junk_lines_skipped():
    records = [session(("t.T.test_a", "passed"), *controls()), session(kind="pytest")]
    text = "\n".join(json.dumps(r) for r in records) + "\nnot json\n[1, 2]\n"
    files = {"traj2env/sessions.jsonl": FileEntry(text.encode())}
    assert [r["kind"] for r in read_sessions(files)] == ["unittest", "pytest"]
    assert read_sessions({}) == []


def test_a_copy_is_known_by_its_planned_name_whatever_the_runner_prefixes():
    names = {"test_qwertyuiopasdf"}
    assert judging.copy_name("t.T.test_qwertyuiopasdf", names) == "test_qwertyuiopasdf"
    assert judging.copy_name("tests/t.py::test_qwertyuiopasdf", names) == "test_qwertyuiopasdf"
    assert judging.copy_name("/app/t.test.js > s > test_qwertyuiopasdf", names)
    assert judging.copy_name("t.T.test_qwertyuiopasdf (i=1)", names)  # a subtest of it
    assert judging.copy_name("t.T.test_a", names) is None


# -- the reward rules ------------------------------------------------------------------------------


def test_all_real_tests_passing_with_controls_behaving_scores_one():
    records = [session(("t.T.test_a", "passed"), *controls())]
    verdict = judge_graded_run(OK, records, PLAN, reference={"t.T.test_a": 1})
    assert (verdict.reward, verdict.reasons) == (1.0, ())
    assert verdict.passed == {"t.T.test_a": 1}


def test_a_must_fail_control_reported_passing_means_forged_results():
    records = [session(("t.T.test_a", "passed"), *controls(fail_outcome="passed"))]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0
    assert "forged in-process" in verdict.reasons[0]


def test_a_verbatim_copy_that_failed_where_its_test_passed_means_forged_results():
    records = [session(("t.T.test_a", "passed"), *controls(pass_outcome="failed"))]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0
    assert "the real test's result was forged" in verdict.reasons[0]


def test_the_unchanged_start_says_no_change_and_claims_no_forgery():
    # The no-op: the test fails as at the start, and its verbatim copy with it (same code).
    records = [session(("t.T.test_a", "failed"), *controls(pass_outcome="failed"))]
    verdict = judge_graded_run(
        FAILED_RUN, records, PLAN, reference={"t.T.test_a": 1}, start_failed=["t.T.test_a"]
    )
    assert verdict.reward == 0.0
    assert verdict.reasons[0] == "no change: the recorded check failed as at the start"
    assert not any("forged" in r for r in verdict.reasons), verdict.reasons


def test_a_verbatim_copy_failing_with_its_failing_test_is_a_failure_not_a_forgery():
    records = [session(("t.T.test_a", "failed"), *controls(pass_outcome="failed"))]
    verdict = judge_graded_run(FAILED_RUN, records, PLAN, reference={"t.T.test_a": 1})
    assert verdict.reward == 0.0
    assert not any("forged" in r for r in verdict.reasons), verdict.reasons
    assert any("did not pass: t.T.test_a" in r for r in verdict.reasons)


def test_a_falsified_copy_passing_where_its_test_fails_is_a_failure_not_a_forgery():
    # On the buggy code the test's assertion is false, so the copy with it made false holds.
    records = [session(("t.T.test_a", "failed"), *controls(fail_outcome="passed"))]
    verdict = judge_graded_run(
        FAILED_RUN, records, PLAN, reference={"t.T.test_a": 1}, start_failed=["t.T.test_a"]
    )
    assert verdict.reward == 0.0
    assert verdict.reasons[0] == "no change: the recorded check failed as at the start"
    assert not any("forged" in r for r in verdict.reasons), verdict.reasons


def test_a_session_without_both_kinds_of_control_scores_zero():
    one_kind = {"test_qwertyuiopasdf": COPIES["test_qwertyuiopasdf"]}
    records = [session(("t.T.test_a", "passed"), controls()[0], copies=one_kind)]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0 and "no control copies were planned" in verdict.reasons[0]


def test_a_planned_control_that_never_ran_scores_zero():
    records = [session(("t.T.test_a", "passed"), controls()[0])]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0 and "ran 0 times" in verdict.reasons[0]


def test_missing_results_for_an_expected_runner_score_zero_even_with_exit_zero():
    verdict = judge_graded_run(OK, [], PLAN)
    assert verdict.reward == 0.0
    assert "no unittest results" in verdict.reasons[0]


def test_a_runner_whose_report_never_ended_scores_zero():
    records = [session(("t.T.test_a", "passed"), *controls(), complete=False)]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0 and "ended before the runner finished" in verdict.reasons[0]


def test_a_test_reported_twice_scores_zero_whatever_the_outcomes():
    records = [session(("t.T.test_a", "failed"), ("t.T.test_a", "passed"), *controls())]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0
    assert any("reported more than once" in r for r in verdict.reasons)


def test_the_graders_findings_score_zero():
    records = [session(("t.T.test_a", "passed"), *controls())]
    finding = "decimal.py shadows the 'decimal' module the tests may import"
    verdict = judge_graded_run(OK, records, PLAN, findings=[finding])
    assert verdict.reasons == (finding,)


def test_tests_that_passed_on_the_reference_must_pass_again_not_vanish_or_skip():
    records = [session(("t.T.test_a", "passed"), ("t.T.test_b", "skipped"), *controls())]
    reference = {"t.T.test_a": 1, "t.T.test_b": 1}
    verdict = judge_graded_run(OK, records, PLAN, reference=reference)
    assert verdict.reward == 0.0
    assert "t.T.test_b" in verdict.reasons[0]


def test_a_failing_check_or_a_timeout_scores_zero():
    records = [session(("t.T.test_a", "passed"), *controls())]
    assert judge_graded_run(FAILED_RUN, records, PLAN).reward == 0.0
    timed_out = ExecResult(None, "", "", 600.0, timed_out=True)
    assert "time limit" in judge_graded_run(timed_out, records, PLAN).reasons[0]


def test_no_real_test_is_not_a_pass():
    verdict = judge_graded_run(OK, [session(*controls())], PLAN)
    assert verdict.reasons == ("unittest: no real test ran",)


def test_a_check_without_a_runner_is_graded_by_exit_status_and_says_so():
    plan = plan_check("test -f build/report.txt", ".", {})
    assert plan.mode == "exit_code"
    assert judge_graded_run(OK, [], plan).reward == 1.0
    assert judge_graded_run(FAILED_RUN, [], plan).grading == "exit_code"


def test_the_check_in_the_image_learns_which_tests_can_serve_as_controls():
    copies = {
        "test_aaaaaaaaaaaaaa": {"of": "t.T.test_a", "fail": False},
        "test_bbbbbbbbbbbbbb": {"of": "t.T.test_a", "fail": True},
        "test_cccccccccccccc": {"of": "t.T.test_b", "fail": False},
        "test_dddddddddddddd": {"of": "t.T.test_b", "fail": True},  # its assertion not reached
    }
    cases = [
        ("t.T.test_a", "passed"),
        ("t.T.test_b", "passed"),
        ("t.T.test_aaaaaaaaaaaaaa", "passed"),
        ("t.T.test_bbbbbbbbbbbbbb", "failed"),
        ("t.T.test_cccccccccccccc", "passed"),
        ("t.T.test_dddddddddddddd", "passed"),
    ]
    records = [session(*cases, copies=copies, baseline=True)]
    verdict = judge_graded_run(OK, records, PLAN, baseline=True)
    assert verdict.reward == 1.0, verdict.reasons
    assert verdict.controls == {"copyable": ["t.T.test_a", "t.T.test_b"], "mutable": ["t.T.test_a"]}
    only_b = {k: v for k, v in copies.items() if v["of"] == "t.T.test_b"}
    records = [session(*cases[1:2], *cases[4:], copies=only_b, baseline=True)]
    verdict = judge_graded_run(OK, records, PLAN, baseline=True)
    assert verdict.reward == 0.0 and "no control could be made" in verdict.reasons[0]


def test_a_runner_exits_0_when_only_its_falsified_copies_failed():
    good = session(("t.T.test_a", "passed"), *controls())
    assert judging.runner_status(good, 1) == 0
    assert judging.runner_status(session(("t.T.test_a", "failed"), *controls()), 1) == 1
    assert judging.runner_status(session(("t.T.test_a", "passed"), *controls("failed")), 0) == 1
    assert judging.runner_status({**good, "problems": ["reported twice"]}, 0) == 1
