"""`manage.py evaluate` prints one JSON object; exit 0 gate passed, 1 failed, 2 bad input."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.training.core.test_suite import suite
from tests.training.factories import claimed_only, make_behaviour, make_rollout, repaired

pytestmark = pytest.mark.django_db


def evaluate(*args: str) -> tuple[int, dict]:
    out = StringIO()
    try:
        call_command("evaluate", *args, "--json", stdout=out)
        code = 0
    except CommandError as error:
        code = error.returncode
    return code, json.loads(out.getvalue())


def test_a_behaviour_whose_rollouts_all_pass_exits_0_with_its_summary():
    behaviour = make_behaviour(tasks=2)
    for task in behaviour.tasks.all():
        make_rollout(task.candidate, repaired(), agent="oracle")
    code, summary = evaluate("--behaviour", behaviour.slug)
    assert code == 0
    assert summary["gate_passed"] is True and summary["rollouts"] == 2
    assert summary["eval_run"] and summary["behaviour"] == "failing-test-repair"


def test_a_failing_rollout_fails_the_gate_with_exit_1_and_agent_narrows_it():
    behaviour = make_behaviour(tasks=1)
    task = behaviour.tasks.get().candidate
    make_rollout(task, repaired(), agent="oracle")
    make_rollout(task, claimed_only(), agent="nop", reward=0.0)
    code, summary = evaluate("--behaviour", behaviour.slug)
    assert code == 1 and summary["failed"] == 1
    code, summary = evaluate("--behaviour", behaviour.slug, "--agent", "oracle")
    assert code == 0 and summary["agent"] == "oracle"


def test_an_unknown_behaviour_is_bad_input_naming_the_known_ones():
    make_behaviour()
    code, payload = evaluate("--behaviour", "no-such")
    assert code == 2
    assert "no-such" in payload["error"] and "failing-test-repair" in payload["error"]


def test_a_seed_suite_prints_the_seed_summary_fields(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite()))
    code, report = evaluate("--suite", str(path))
    assert code == 0
    assert {
        "taskCount",
        "passed",
        "failed",
        "averageReward",
        "evalGatePassed",
        "unhooksReady",
        "deployable",
        "warnings",
    } <= set(report["summary"])


def test_a_suite_that_is_not_json_exits_2_and_says_why(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text("{not json")
    code, payload = evaluate("--suite", str(path))
    assert code == 2 and "not JSON" in payload["error"]


def test_a_suite_that_is_not_utf8_exits_2_with_one_line_saying_so(tmp_path):
    path = tmp_path / "suite.json"
    path.write_bytes(b'\xff\xfe{"tasks": []}')
    code, payload = evaluate("--suite", str(path))
    assert code == 2
    assert payload["error"] == f"{path} is not UTF-8 text (byte 0xff at offset 0)"


@pytest.mark.parametrize("depth", [3_000, 100_000])
def test_a_suite_nested_too_deeply_exits_2_with_one_line_saying_so(tmp_path, depth):
    path = tmp_path / "suite.json"
    path.write_text('{"tasks": ' + "[" * depth + "]" * depth + "}")
    code, payload = evaluate("--suite", str(path))
    assert code == 2
    assert payload["error"] == f"{path} is nested too deeply to read as a suite"


def test_an_eval_that_breaks_exits_2_not_the_gate_failed_1(capsys):
    behaviour = make_behaviour(tasks=1)
    rollout = make_rollout(behaviour.tasks.get().candidate, repaired(), agent="oracle")
    type(rollout).objects.filter(pk=rollout.pk).update(facts={"not": "facts"})
    code, payload = evaluate("--behaviour", behaviour.slug)
    assert code == 2
    assert payload["error"].startswith(f"eval run {payload['eval_run']} failed: ")
    assert "Traceback" not in capsys.readouterr().err
