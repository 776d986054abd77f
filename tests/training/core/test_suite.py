"""Suites written for the trainer seed's harness, read and scored by ours."""

from __future__ import annotations

import copy
import json

import pytest

from training.core.suite import (
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_GATE_PASSED,
    SuiteError,
    evaluate_suite,
    evaluate_suite_file,
    exit_code,
)

REVIEW_FIX = {
    "agent": {"name": "review-fixer", "baseModel": "base", "adapter": "lora-review-fix"},
    "rewardSpec": {
        "actionOrderRequired": True,
        "defaultPassReward": 1,
        "requireValidatedUnhooksForDeployment": True,
    },
    "unhooks": [
        {"name": "reset fixture", "command": "npm run fixture:reset", "validated": True},
        "disable adapter",
    ],
    "tasks": [
        {
            "id": "reply-thread",
            "instruction": "Fix a reviewer thread and cite validation.",
            "expectedActions": [
                {"tool": "edit_file", "argsContains": ["src/review.js"]},
                {"tool": "run_tests", "argsContains": ["npm test"]},
            ],
            "expectedEvidence": [
                {"kind": "test-output", "contains": ["validation passed"], "exitCode": 0}
            ],
            "failureModes": [{"name": "no reply posted", "clearWhenContains": "reply posted"}],
        }
    ],
    "trajectories": [
        {
            "taskId": "reply-thread",
            "actions": [
                {"tool": "edit_file", "args": {"path": "/repo/src/review.js"}},
                {"tool": "run_tests", "args": {"command": "cd web && npm test -- --ci"}},
            ],
            "artifacts": [
                {"kind": "test-output", "stdout": "all validation passed", "exitCode": 0},
                {"kind": "comment", "content": "reply posted with the test output"},
            ],
            "finalState": "Fixed the review comment; validation passed.",
        }
    ],
}


def suite(**changes):
    document = copy.deepcopy(REVIEW_FIX)
    document.update(changes)
    return document


def test_a_well_backed_trajectory_passes_the_gate_and_is_deployable():
    report = evaluate_suite(suite())
    assert report["summary"] == {
        "taskCount": 1,
        "trajectoryCount": 1,
        "passed": 1,
        "failed": 0,
        "averageReward": 1.0,
        "evalGatePassed": True,
        "unhooksReady": True,
        "validatedUnhookCount": 1,
        "deployable": True,
        "warnings": [],
    }
    (row,) = report["rows"]
    (scored,) = row["trajectories"]
    assert [a["matchedIndex"] for a in scored["actionResults"]] == [0, 1]
    assert scored["failureModes"] == [] and not scored["selfReportOnly"]
    assert report["trainingRows"] == [
        {"taskId": "reply-thread", "trajectory": 0, "reward": 1.0, "preference": "chosen"}
    ]
    assert report["suggestedUnhooks"] == ["disable adapter"]
    assert exit_code(report) == EXIT_GATE_PASSED


def test_seed_case_a_self_reported_pass_with_no_artifacts_is_rejected():
    document = suite()
    document["trajectories"][0]["artifacts"] = []
    report = evaluate_suite(document)
    (scored,) = report["rows"][0]["trajectories"]
    assert scored["selfReportOnly"] is True
    assert scored["score"] == pytest.approx(0.667) and scored["reward"] == 0.0
    assert scored["pass"] is False and report["trainingRows"][0]["preference"] == "rejected"
    assert report["summary"]["evalGatePassed"] is False
    assert exit_code(report) == EXIT_GATE_FAILED


def test_seed_case_an_edit_before_the_required_prior_action_halves_the_reward():
    document = suite()
    task = document["tasks"][0]
    task["expectedActions"] = [
        {"tool": "read_file", "argsContains": ["src/review.js"]},
        {"tool": "edit_file", "argsContains": ["src/review.js"]},
    ]
    del task["expectedEvidence"]
    document["trajectories"][0]["actions"] = [
        {"tool": "edit_file", "args": {"path": "src/review.js"}},
        {"tool": "read_file", "args": {"path": "src/review.js"}},
    ]
    report = evaluate_suite(document)
    scored = report["rows"][0]["trajectories"][0]
    assert scored["reward"] == 0.5 and scored["pass"] is False
    assert [a["matchedIndex"] for a in scored["actionResults"]] == [1, -1]
    unordered = copy.deepcopy(document) | {"rewardSpec": {"actionOrderRequired": False}}
    assert evaluate_suite(unordered)["rows"][0]["reward"] == 1.0


def test_seed_case_a_deployable_report_needs_a_validated_unhook():
    for unhooks in (
        [],
        ["disable adapter"],
        [{"name": "reset", "command": "x", "validated": False}],
    ):
        report = evaluate_suite(suite(unhooks=unhooks))
        summary = report["summary"]
        assert summary["evalGatePassed"] and not summary["unhooksReady"]
        assert not summary["deployable"] and summary["validatedUnhookCount"] == 0
        assert "no validated unhooks supplied" in summary["warnings"][-1]
        assert exit_code(report) == EXIT_GATE_PASSED  # the gate is the eval; deploying is later
    relaxed = suite(unhooks=[], rewardSpec={"requireValidatedUnhooksForDeployment": False})
    assert evaluate_suite(relaxed)["summary"]["deployable"] is True


def test_needles_match_whole_values_paths_and_command_tokens_not_substrings():
    document = suite()
    actions = document["trajectories"][0]["actions"]
    actions[0]["args"] = {"path": "src/review.js.bak"}  # the seed's substring match accepts this
    actions[1]["args"] = {"command": "npm testing"}
    scored = evaluate_suite(document)["rows"][0]["trajectories"][0]
    assert [a["matched"] for a in scored["actionResults"]] == [False, False]


def test_evidence_needles_do_not_match_inside_longer_numbers():
    document = suite()
    task = document["tasks"][0]
    task["expectedEvidence"] = [{"kind": "test-output", "contains": "0 failed"}]
    document["trajectories"][0]["artifacts"] = [{"kind": "test-output", "stdout": "10 failed"}]
    document["trajectories"][0]["finalState"] = "Work in progress."
    scored = evaluate_suite(document)["rows"][0]["trajectories"][0]
    assert scored["evidenceResults"][0]["matched"] is False and scored["reward"] == 0.667


def test_every_trajectory_of_a_task_is_scored_and_all_must_pass():
    document = suite()
    second = copy.deepcopy(document["trajectories"][0]) | {"id": "retry", "artifacts": []}
    second["finalState"] = "Could not run the tests."
    document["trajectories"].append(second)
    report = evaluate_suite(document)
    (row,) = report["rows"]
    assert row["trajectoryCount"] == 2 and row["passedTrajectories"] == 1
    assert row["pass"] is False and row["passAt1"] == 0.5
    assert row["reward"] == pytest.approx((1.0 + 0.667) / 2, abs=1e-3)
    assert [t["trajectory"] for t in row["trajectories"]] == [0, "retry"]
    assert report["summary"]["failed"] == 1


def test_a_task_without_trajectories_fails_the_gate_with_a_warning():
    document = suite(trajectories=[])
    report = evaluate_suite(document)
    assert report["summary"]["averageReward"] == 0.0 and not report["summary"]["evalGatePassed"]
    assert report["summary"]["warnings"][0] == (
        "task 'reply-thread' has no trajectory: it fails the gate"
    )


def test_failure_modes_are_reported_when_their_clearing_text_is_absent():
    document = suite()
    document["trajectories"][0]["artifacts"].pop()
    scored = evaluate_suite(document)["rows"][0]["trajectories"][0]
    assert [m["name"] for m in scored["failureModes"]] == ["no reply posted"]


def test_expected_final_contains_is_one_evidence_item():
    document = suite()
    task = document["tasks"][0]
    del task["expectedEvidence"]
    task |= {"expectedFinalContains": "validation passed", "expectedFinalKind": "test-output"}
    scored = evaluate_suite(document)["rows"][0]["trajectories"][0]
    assert scored["evidenceResults"][0]["kind"] == "test-output"
    assert scored["reward"] == 1.0


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"tasks": []}, "$.tasks: [] should be non-empty"),
        (
            {"tasks": [{"id": "a", "expectedAction": []}]},
            "$.tasks[0]: Additional properties are not allowed ('expectedAction' was unexpected)",
        ),
        (
            {"tasks": [{"id": "a"}]},
            "$.tasks[0]: task 'a' has no expectedActions and no evidence; it would score every "
            "trajectory 1",
        ),
        (
            {"tasks": [{"id": "a", "expectedEvidence": [{}]}]},
            "$.tasks[0].expectedEvidence[0]: matches any artifact; give it a kind, contains, "
            "exitCode or status",
        ),
        (
            {"tasks": [{"id": "a", "expectedEvidence": [{"contains": []}]}]},
            "$.tasks[0].expectedEvidence[0]: matches any artifact; give it a kind, contains, "
            "exitCode or status",
        ),
        (
            {"tasks": [{"id": "a", "expectedEvidence": [{"kind": "", "status": ""}]}]},
            "$.tasks[0].expectedEvidence[0]: matches any artifact; give it a kind, contains, "
            "exitCode or status",
        ),
        (
            {"tasks": [{"id": "a", "expectedEvidence": [{"contains": [], "kind": ""}]}]},
            "$.tasks[0].expectedEvidence[0]: matches any artifact; give it a kind, contains, "
            "exitCode or status",
        ),
        (
            {
                "tasks": [
                    {"id": "a", "expectedEvidence": [{"kind": "test-output", "contains": [""]}]}
                ]
            },
            "$.tasks[0].expectedEvidence[0].contains: an empty needle matches nothing useful; "
            "drop it or write what to find",
        ),
        (
            {
                "tasks": [
                    {"id": "a", "expectedActions": [{"tool": "Bash", "argsContains": ["", "x"]}]}
                ]
            },
            "$.tasks[0].expectedActions[0].argsContains: an empty needle matches nothing useful; "
            "drop it or write what to find",
        ),
        (
            {
                "tasks": [{"id": "a", "expectedFinalContains": "ok"}],
                "trajectories": [{"taskId": "b"}],
            },
            "$.trajectories[0].taskId: 'b' names no task",
        ),
        (
            {"tasks": [{"id": "a", "expectedFinalContains": "ok"}], "rewardSpec": {"x": 1}},
            "$.rewardSpec: Additional properties are not allowed ('x' was unexpected)",
        ),
        (
            {
                "tasks": [
                    {"id": "a", "expectedFinalContains": "ok"},
                    {"id": "a", "expectedFinalContains": "ok"},
                ]
            },
            "$.tasks[1].id: 'a' is used by an earlier task",
        ),
    ],
)
def test_bad_suites_are_refused_naming_what_is_wrong(document, problem):
    with pytest.raises(SuiteError) as caught:
        evaluate_suite(document)
    assert problem in caught.value.problems


def test_the_file_reader_gives_the_exit_code_rule(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(suite()))
    assert evaluate_suite_file(good)[0] == EXIT_GATE_PASSED
    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps(suite(trajectories=[])))
    assert evaluate_suite_file(failing)[0] == EXIT_GATE_FAILED
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    code, payload = evaluate_suite_file(broken)
    assert code == EXIT_BAD_INPUT and payload["error"].startswith(f"{broken} is not JSON")
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"tasks": []}))
    code, payload = evaluate_suite_file(invalid)
    assert code == EXIT_BAD_INPUT and payload["problems"] == ["$.tasks: [] should be non-empty"]
    code, payload = evaluate_suite_file(tmp_path / "missing.json")
    assert code == EXIT_BAD_INPUT and "cannot read" in payload["error"]
