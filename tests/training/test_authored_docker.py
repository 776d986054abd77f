"""An authored task end to end, for real: `manage.py authored_import` keeps the catalogue's "stop
when credentials are missing" example (its trial matrix in Docker) and adds it to that
behaviour; Harbor's own runner attempts the kept task with its oracle through our offline
environment; the jobs folder imports as a rollout of it, re-graded by the task's own
tests/test.sh from the collected /app (1, as Harbor's), with the trajectory its wrapped solve.sh
left, and an empty /app grades 0.

Skips when no Docker engine answers or the offline base image is missing (the fixtures of
tests/training/core/harbor/test_harbor_run.py).
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.test import override_settings

from tests.training.core.authored.helpers import EXAMPLE
from tests.training.core.harbor.test_harbor_run import (  # noqa: F401 (fixtures)
    base_ref,
    engine,
    harbor_run,
    left_behind,
    new_run_id,
)
from tests.training.factories import make_behaviour
from training.core.authored import CATALOGUE
from training.models import AuthoredTask, BehaviourTask, Rollout
from training.services.rollouts import rollouts_regrade

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db]

BEHAVIOUR = "stop-when-credentials-missing"


def command(name: str, *args: str) -> tuple[int, dict[str, Any]]:
    out = StringIO()
    try:
        call_command(name, *args, "--json", stdout=out)
        code = 0
    except CommandError as error:
        code = error.returncode
    return code, json.loads(out.getvalue())


@pytest.fixture(scope="module")
def loop(django_db_setup, django_db_blocker, engine, base_ref, tmp_path_factory):  # noqa: F811
    """The Django side once for the module, rolled back at its end; tests read plain data."""
    work = tmp_path_factory.mktemp("authored-loop")
    store = {**settings.TRAJ2ENV, "AUTHORED_DIR": str(work / "store")}
    with django_db_blocker.unblock(), transaction.atomic(), override_settings(TRAJ2ENV=store):
        behaviour = make_behaviour(BEHAVIOUR)
        imported = command("authored_import", str(EXAMPLE), "--behaviour", BEHAVIOUR)
        row = AuthoredTask.objects.get(pk=imported[1]["authored_task"])
        # Harbor's runner on the kept copy: its folder is a dataset of one task.
        run_id = new_run_id("authored")
        jobs = work / "jobs"
        ran = harbor_run(Path(row.task_dir).parent, "oracle", jobs, run_id)
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
        rollouts = command("rollouts_import", str(jobs))
        (work / "empty-app").mkdir()
        empty = Rollout.objects.create(
            candidate=row.candidate,
            trial_name="empty__1",
            agent="nobody",
            app_dir=str(work / "empty-app"),
        )
        rollouts_regrade(candidate_id=row.candidate_id, rollout_ids=[empty.pk], engine=engine)
        outcome = {
            "import": imported,
            "row": {"status": row.status, "candidate": row.candidate_id, "task_dir": row.task_dir},
            "candidate": {
                "family": row.candidate.family,
                "status": row.candidate.status,
                "trajectory": row.candidate.trajectory_id,
            },
            "chosen": list(
                BehaviourTask.objects.filter(behaviour=behaviour).values_list("candidate", "split")
            ),
            "rollouts": rollouts,
            "graded": {
                r.agent: (r.candidate_id, r.grade, r.reward, r.harbor_reward, r.grade_detail)
                for r in Rollout.objects.all()
            },
            "trajectories": {
                r.agent: _calls(r) for r in Rollout.objects.filter(trajectory__isnull=False)
            },
            "left_behind": left_behind(engine, run_id),
        }
        transaction.set_rollback(True)
    return outcome


def test_the_command_keeps_the_example_with_every_trial_as_it_must_score(loop):
    code, payload = loop["import"]
    assert code == 0 and payload["kept"] is True, payload
    assert payload["status"] == "kept" and payload["reasons"] == [] and payload["won"] == []
    names = [t["name"] for t in payload["trials"]]
    assert names == ["oracle"] * 3 + ["noop"] + [c.name for c in CATALOGUE]
    assert all(t["as_expected"] for t in payload["trials"]), payload["trials"]


def test_the_kept_example_is_a_kept_task_of_its_behaviour(loop):
    candidate = loop["row"]["candidate"]
    assert loop["candidate"] == {"family": "authored", "status": "kept", "trajectory": None}
    assert [c for c, _ in loop["chosen"]] == [candidate]
    _, payload = loop["import"]
    assert payload["behaviour_task"]["split"] == loop["chosen"][0][1]


def test_harbors_oracle_run_imports_as_a_rollout_of_the_authored_task_graded_1(loop):
    code, imported = loop["rollouts"]
    assert code == 0 and (imported["imported"], imported["skipped"]) == (1, []), imported
    candidate, grade, reward, harbor_reward, detail = loop["graded"]["oracle"]
    assert candidate == loop["row"]["candidate"]
    assert (grade, reward, harbor_reward) == ("graded", 1.0, 1.0), detail
    assert detail["agrees_with_harbor"] is True
    assert detail["evidence"]["rewards"] == {"reward": 1.0}
    assert loop["left_behind"] == []


def test_the_oracles_solve_sh_leaves_the_trajectory_of_what_it_did(loop):
    # The solution's command, then the report it wrote: an exportable, pairable rollout.
    assert loop["trajectories"]["oracle"] == ["Bash", "Write"]


def test_an_empty_collected_app_grades_0(loop):
    _, grade, reward, _, detail = loop["graded"]["nobody"]
    assert (grade, reward) == ("graded", 0.0), detail


def _calls(rollout: Rollout) -> list[str]:
    steps = rollout.trajectory.steps.order_by("index") if rollout.trajectory else []
    return [call["function_name"] for step in steps for call in step.tool_calls]
