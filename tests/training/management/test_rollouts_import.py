"""`manage.py rollouts_import JOBS_DIR`: import and grade at once, for users without a worker.
Exit 0 when something was imported, 1 when nothing was, 2 on bad input."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from groundwork.core.docker import InfraError
from tests.tasks_review.factories import make_candidate
from tests.training.core.harbor.test_jobs import COLLECTED, write_trial
from training.core.harbor.jobs import SERVED_KEY
from training.models import Rollout, RolloutImport

pytestmark = pytest.mark.django_db

TASK = "traj2env/repair-1"  # the task the trials of write_trial ran


def rollouts_import(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("rollouts_import", *args, stdout=out)
        code = 0
    except CommandError as error:
        code = error.returncode
    return code, out.getvalue()


@pytest.fixture
def jobs(tmp_path):
    write_trial(tmp_path / "jobs" / "repair-1__a", files={"verifier/reward.txt": "1", **COLLECTED})
    return tmp_path / "jobs"


def test_a_folder_that_does_not_exist_is_bad_input_naming_it(tmp_path):
    code, out = rollouts_import(str(tmp_path / "nowhere"), "--json")
    assert code == 2
    error = json.loads(out)["error"]
    assert error.startswith(repr(str(tmp_path))[:20]) and "is not a folder" in error
    assert not RolloutImport.objects.exists()


def test_nothing_imported_exits_1_with_every_skipped_trial_and_its_reason(jobs):
    code, out = rollouts_import(str(jobs), "--json")
    assert code == 1
    payload = json.loads(out)
    assert (payload["trials"], payload["imported"], payload["rollouts"]) == (1, 0, [])
    (skipped,) = payload["skipped"]
    assert (skipped["trial"], skipped["reason"]) == ("repair-1__a", "unknown_task")


def test_imported_rollouts_are_graded_at_once_and_a_gone_task_leaves_them_ungraded(jobs):
    task = make_candidate(trials=False, task_name=TASK, task_dir="")
    code, out = rollouts_import(str(jobs), "--json")
    assert code == 0
    payload = json.loads(out)
    (rollout,) = Rollout.objects.all()
    assert payload["imported"] == 1 and payload["rollouts"] == [rollout.pk]
    assert (payload["graded"], payload["ungraded"]) == (0, 1)
    assert rollout.candidate == task and rollout.harbor_reward == 1.0
    assert rollout.grade == "ungraded"
    assert rollout.grade_detail["reason"] == f"the kept task (candidate {task.pk}) is gone"


def test_a_rollout_records_the_adapter_digest_serving_recorded_not_the_adapter_it_names(tmp_path):
    served = "e" * 64
    files = {"verifier/reward.txt": "1", **COLLECTED}
    write_trial(tmp_path / "jobs" / "repair-1__s", files=files, metadata={SERVED_KEY: served})
    write_trial(tmp_path / "jobs" / "repair-1__n", files=files)
    make_candidate(trials=False, task_name=TASK, task_dir="")
    assert rollouts_import(str(tmp_path / "jobs"), "--json")[0] == 0
    by_trial = dict(Rollout.objects.values_list("trial_name", "served_sha256"))
    assert by_trial == {"repair-1__s": served, "repair-1__n": ""}


def test_without_docker_the_rollouts_stay_ungraded_with_the_reason(jobs, tmp_path, monkeypatch):
    def no_engine(*args, **kwargs):
        raise InfraError("Cannot connect to the Docker daemon")

    monkeypatch.setattr("training.services.rollouts.Engine.from_env", no_engine)
    make_candidate(trials=False, task_name=TASK, task_dir=str(tmp_path))
    code, out = rollouts_import(str(jobs))
    assert code == 0
    assert "1 trial(s), 1 imported, 0 skipped; 0 graded, 1 ungraded" in out
    (rollout,) = Rollout.objects.all()
    assert rollout.grade_detail["reason"].startswith("Docker is not usable: Cannot connect")


def test_importing_the_same_folder_again_adds_nothing_twice(jobs):
    make_candidate(trials=False, task_name=TASK, task_dir="")
    assert rollouts_import(str(jobs))[0] == 0
    assert rollouts_import(str(jobs))[0] == 0
    assert Rollout.objects.count() == 1 and RolloutImport.objects.count() == 2


def test_a_repeated_trial_name_never_overwrites_an_evaluated_rollout(jobs, tmp_path):
    make_candidate(trials=False, task_name=TASK, task_dir="")
    assert rollouts_import(str(jobs))[0] == 0
    first = Rollout.objects.get()
    Rollout.objects.filter(pk=first.pk).update(reward=1.0, grade=Rollout.Grade.GRADED)
    again = tmp_path / "again"
    write_trial(again / "repair-1__a", files={"verifier/reward.txt": "0", **COLLECTED})
    code, out = rollouts_import(str(again), "--json")
    assert code == 0
    first.refresh_from_db()
    assert (first.reward, first.grade, first.trial_dir) == (
        1.0,
        "graded",
        str(jobs / "repair-1__a"),
    )
    duplicate = Rollout.objects.exclude(pk=first.pk).get()
    assert duplicate.trial_name == "repair-1__a (2)"
    assert duplicate.grade_detail["duplicate_of"] == first.pk
    # The same folder again leaves the evaluated rollout as it was, and says why.
    code, out = rollouts_import(str(jobs), "--json")
    assert json.loads(out)["skipped"][0]["reason"] == "already_evaluated"
    assert Rollout.objects.count() == 2


def test_a_repeated_session_id_gives_each_trial_its_own_trajectory(tmp_path):
    make_candidate(trials=False, task_name=TASK, task_dir="")

    def session(command: str) -> str:
        lines = [
            {
                "type": "user",
                "sessionId": "s-1",
                "uuid": "u1",
                "cwd": "/app",
                "timestamp": "2026-11-30T12:00:00Z",
                "message": {"role": "user", "content": "fix the parser"},
            },
            {
                "type": "assistant",
                "sessionId": "s-1",
                "uuid": "u2",
                "parentUuid": "u1",
                "cwd": "/app",
                "timestamp": "2026-11-30T12:00:01Z",
                "message": {
                    "role": "assistant",
                    "model": "m",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "Bash",
                            "input": {"command": command},
                        }
                    ],
                },
            },
        ]
        return "".join(json.dumps(line) + "\n" for line in lines)

    log = "agent/sessions/projects/-app/s-1.jsonl"
    for name, command in (("repair-1__a", "ls"), ("repair-1__b", "rm -rf tests")):
        files = {"verifier/reward.txt": "1", log: session(command), **COLLECTED}
        write_trial(tmp_path / "jobs" / name, files=files)
    assert rollouts_import(str(tmp_path / "jobs"))[0] == 0
    a, b = Rollout.objects.order_by("trial_name")
    assert a.trajectory is not None and b.trajectory is not None
    assert b.trajectory != a.trajectory, "b must not take a's actions for its own"
    # Each trajectory is made from its own trial's log, not filed as the other's twin.
    for rollout in (a, b):
        assert rollout.trajectory.source.path.startswith(rollout.trial_dir + "/")
        assert not rollout.trajectory.twin_sources.exists()
        assert "problems" not in rollout.grade_detail
    commands = [action.get("c") for action in b.facts["actions"]]
    assert commands == ["rm -rf tests"]
