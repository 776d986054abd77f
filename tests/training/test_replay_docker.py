"""Rollouts with real paths and no model, for real: the Claude Code sample's kept task, its replay
script (`replay_script`), `harbor run` with the replay agent whole and cut before the fix through
our offline environment, the jobs folder imported and re-graded (`rollouts_import`), and a
preference pair built from the two rollouts (`pairs_build`'s service).

One task and two trials: the task is written, not put through the trial matrix (the sample's
repair is kept by tests/training/core/harbor/test_harbor_run.py), so the Docker time is the two
trials and one grading. Skips when no Docker engine answers; builds the offline base image when
missing (that fixture's docstring says what it costs).
"""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction

from tests.training.core.harbor.test_harbor_run import (  # noqa: F401 (fixtures)
    base_ref,
    engine,
    harbor_run,
    left_behind,
    new_run_id,
)
from tests.training.factories import make_behaviour
from tests.training.samples import kept_sample
from training.core.harbor.replay_agent import ReplayAgent
from training.models import BehaviourTask, Rollout
from training.services.behaviours import behaviour_tasks_add
from training.services.pairs import pairs_build
from training.services.replay_scripts import replay_script_write

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db]

AGENT = ReplayAgent.import_path()
CUTS = ("whole", "before_fix")


@pytest.fixture(scope="module")
def replayed(django_db_setup, django_db_blocker, engine, base_ref, tmp_path_factory):  # noqa: F811
    """The Django side once for the module, rolled back at its end; what the tests read is
    plain data, so the Docker work is done once."""
    dataset, jobs = tmp_path_factory.mktemp("replay-tasks"), tmp_path_factory.mktemp("replay-jobs")
    run_id = new_run_id("replay")
    with django_db_blocker.unblock(), transaction.atomic():
        task = kept_sample("claude-code", dataset, base_image=base_ref, check_timeout=120)
        script, _ = replay_script_write(user=None, candidate_id=task.pk)
        for cut in CUTS:
            done = harbor_run(
                dataset / "claude-code",
                AGENT,
                jobs,
                run_id,
                "--ak",
                f"script={script}",
                "--ak",
                f"cut={cut}",
                job_name=cut,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        out = StringIO()
        call_command("rollouts_import", str(jobs), "--json", stdout=out)
        imported = json.loads(out.getvalue())
        behaviour = make_behaviour()
        behaviour_tasks_add(user=None, behaviour_id=behaviour.pk, candidate_ids=[task.pk])
        # The split is a hash of the task's key; this test is about the pair, not the split.
        behaviour.tasks.update(split=BehaviourTask.Split.TRAIN)
        pairs = pairs_build(user=None, behaviour_id=behaviour.pk)
        rollouts = {
            r.trial_dir.split("/")[-2]: _plain(r)
            for r in Rollout.objects.select_related("trajectory").filter(candidate=task)
        }
        outcome: dict[str, Any] = {
            "import": imported,
            "rollouts": rollouts,
            "pairs": [
                {
                    "basis": p.basis,
                    "preferred": p.preferred.trial_dir.split("/")[-2] if p.preferred else None,
                    "sides": sorted(r.trial_dir.split("/")[-2] for r in (p.rollout_a, p.rollout_b)),
                }
                for p in pairs
            ],
            "left_behind": left_behind(engine, run_id),
        }
        transaction.set_rollback(True)
    return outcome


def _plain(rollout: Rollout) -> dict[str, Any]:
    trajectory = rollout.trajectory
    steps = list(trajectory.steps.order_by("index")) if trajectory else []
    return {
        "agent": rollout.agent,
        "reward": rollout.reward,
        "harbor_reward": rollout.harbor_reward,
        "grade": rollout.grade,
        "detail": rollout.grade_detail,
        "trajectory": trajectory.pk if trajectory else None,
        "session_id": trajectory.session_id if trajectory else None,
        "trial": rollout.trial_name,
        "calls": [c["function_name"] for s in steps for c in s.tool_calls],
    }


def test_the_whole_session_replayed_scores_1_and_the_cut_before_its_fix_0(replayed):
    imported = replayed["import"]
    assert (imported["imported"], imported["graded"], imported["skipped"]) == (2, 2, [])
    whole, cut = replayed["rollouts"]["whole"], replayed["rollouts"]["before_fix"]
    assert whole["grade"] == cut["grade"] == "graded", (whole["detail"], cut["detail"])
    assert (whole["reward"], whole["harbor_reward"]) == (1.0, 1.0)
    assert (cut["reward"], cut["harbor_reward"]) == (0.0, 0.0)
    assert whole["agent"] == cut["agent"] == "traj2env-replay"


def test_each_rollout_links_a_trajectory_of_its_own_trial(replayed):
    whole, cut = replayed["rollouts"]["whole"], replayed["rollouts"]["before_fix"]
    assert whole["trajectory"] and cut["trajectory"] and whole["trajectory"] != cut["trajectory"]
    for rollout in (whole, cut):
        assert rollout["session_id"] == f"{rollout['trial']}__agent"
    # The recorded check, the fix, the check again; and the check alone before the fix.
    assert whole["calls"] == ["Bash", "Write", "Bash"]
    assert cut["calls"] == ["Bash"]


def test_a_preference_pair_is_built_from_the_two_replays(replayed):
    (pair,) = replayed["pairs"]
    assert pair["sides"] == ["before_fix", "whole"]
    assert (pair["basis"], pair["preferred"]) == ("outcome", "whole")


def test_the_replays_leave_no_container(replayed):
    assert replayed["left_behind"] == []
