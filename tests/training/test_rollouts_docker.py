"""The learning loop end to end, for real: two sample tasks kept by the trial matrix, `harbor run
-a oracle` and `-a nop` through our offline environment, the jobs folder imported as rollouts
(`manage.py rollouts_import`), each re-graded from its collected /app by the task's own verifier
in Docker (oracle 1, nop 0, both agreeing with Harbor), then `manage.py evaluate` for
failing-test repair: the nop fails; the oracle passes once its solve.sh records a trajectory.

Skips when no Docker engine answers or the offline base image is missing (the fixtures of
tests/training/core/harbor/test_harbor_run.py, whose docstring says what they cost).
"""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from tasks_review.core.trials import read_task
from tests.tasks_review.factories import make_candidate
from tests.training.conftest import HARBOR_GROUP
from tests.training.core.harbor.helpers import SAMPLES
from tests.training.factories import make_behaviour
from training.models import EvalResult, Rollout
from training.services.behaviours import behaviour_tasks_add

# django_db: pytest-django creates the test database only for a session with marked tests.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db, HARBOR_GROUP]

BEHAVIOUR = "failing-test-repair"


def command(name: str, *args: str) -> tuple[int, dict[str, Any]]:
    out = StringIO()
    try:
        call_command(name, *args, "--json", stdout=out)
        code = 0
    except CommandError as error:
        code = error.returncode
    return code, json.loads(out.getvalue())


@pytest.fixture(scope="module")
def loop(django_db_setup, django_db_blocker, kept, runs) -> dict[str, Any]:
    """The Django side once for the module, rolled back at its end: what each test reads is
    plain data, so the Docker work (grading four rollouts) is done once."""
    with django_db_blocker.unblock(), transaction.atomic():
        tasks = {
            fmt: make_candidate(
                trials=False, task_name=read_task(path).name, task_dir=str(path), key=f"kept-{fmt}"
            )
            for fmt, path in kept.items()
        }
        code, imported = command("rollouts_import", str(runs["jobs"]))
        rollouts = {
            (r.agent, fmt): r
            for r in Rollout.objects.select_related("candidate")
            for fmt, task in tasks.items()
            if r.candidate_id == task.pk
        }
        behaviour = make_behaviour(BEHAVIOUR)
        behaviour_tasks_add(
            user=None, behaviour_id=behaviour.pk, candidate_ids=[t.pk for t in tasks.values()]
        )
        evaluations = {
            agent: command("evaluate", "--behaviour", BEHAVIOUR, "--agent", agent)
            for agent in ("oracle", "nop")
        }
        results = {
            agent: [
                (r.rollout.agent, r.passed, r.reward, r.detail)
                for r in EvalResult.objects.filter(run_id=summary["eval_run"]).select_related(
                    "rollout"
                )
            ]
            for agent, (_, summary) in evaluations.items()
        }
        outcome = {
            "import": (code, imported),
            "rollouts": {
                key: {
                    "grade": r.grade,
                    "reward": r.reward,
                    "harbor_reward": r.harbor_reward,
                    "disagrees": r.disagrees,
                    "detail": r.grade_detail,
                    "trajectory": r.trajectory_id,
                    "facts": r.facts is not None,
                }
                for key, r in rollouts.items()
            },
            "evaluations": evaluations,
            "results": results,
        }
        transaction.set_rollback(True)
    return outcome


def test_the_jobs_folder_imports_as_one_rollout_per_trial_linked_to_its_kept_task(loop):
    code, imported = loop["import"]
    assert code == 0, imported
    assert (imported["trials"], imported["imported"], imported["skipped"]) == (4, 4, [])
    assert sorted(loop["rollouts"]) == sorted(
        (agent, fmt) for agent in ("nop", "oracle") for fmt in SAMPLES
    )
    for rollout in loop["rollouts"].values():
        assert rollout["facts"], "every rollout carries the facts the harness scores"


def test_regrading_gives_the_oracle_1_and_the_nop_0_agreeing_with_harbor(loop):
    _, imported = loop["import"]
    assert (imported["graded"], imported["ungraded"]) == (4, 0)
    for (agent, fmt), rollout in loop["rollouts"].items():
        expected = 1.0 if agent == "oracle" else 0.0
        assert rollout["grade"] == "graded", (agent, fmt, rollout["detail"])
        assert rollout["reward"] == expected and rollout["harbor_reward"] == expected
        assert rollout["detail"]["agrees_with_harbor"] is True and not rollout["disagrees"]


def test_evaluating_failing_test_repair_fails_the_nop(loop):
    code, summary = loop["evaluations"]["nop"]
    assert code == 1 and summary["gate_passed"] is False
    assert (summary["rollouts"], summary["failed"]) == (2, 2)
    for agent, passed, reward, detail in loop["results"]["nop"]:
        assert agent == "nop" and not passed and reward < 1
        assert "missed_evidence:verified reward at least 1" in detail["failure_modes"]


def test_the_oracle_is_scored_from_the_world_it_left(loop):
    for agent, _passed, _reward, detail in loop["results"]["oracle"]:
        assert agent == "oracle"
        reward = next(e for e in detail["evidence"] if e["kind"] == "verified_reward")
        assert reward["matched"], "the task's own verifier gave the oracle full reward"


def test_evaluating_failing_test_repair_passes_the_oracle(loop):
    code, summary = loop["evaluations"]["oracle"]
    assert code == 0 and summary["gate_passed"] is True and summary["passed"] == 2
