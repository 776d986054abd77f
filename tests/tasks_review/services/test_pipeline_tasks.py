"""generate over a Harbor trial whose fix edits a file the log never showed: dropped without its
task folder, mined over the files the task's environment lays in the image with it (given in
``source.tasks``, or found beside the jobs folder)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from tasks_review.models import Candidate, PipelineRun
from tests.tasks_review.core.repair_helpers import CALC_BUGGY, PYTEST_FAIL, TEST_CALC
from trajectories.core.replay.synthetic import AtifBuilder

pytestmark = pytest.mark.django_db
PINNED = "example.org/traj2env/base@sha256:" + "ab" * 32
TASK = "datasets/swesmith/calc__add.1a2b"


@pytest.fixture(autouse=True)
def _no_docker(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "BASE_IMAGE": PINNED, "VERIFY": False}


def harbor_run(where: Path) -> Path:
    """A harbor run folder: the task under datasets/ and one trial under jobs/. The agent runs
    the tests (they fail), edits calc.py and runs them again; it never shows either file."""
    task = where / TASK
    (task / "environment" / "tests").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text('version = "1.0"\n')
    (task / "tests" / "test.sh").write_text("#!/bin/sh\npytest /app/tests\n")
    (task / "environment" / "Dockerfile").write_text(
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY calc.py /app/\nCOPY tests/ /app/tests/\n"
    )
    (task / "environment" / "calc.py").write_text(CALC_BUGGY)
    (task / "environment" / "tests" / "test_calc.py").write_text(TEST_CALC)

    builder = AtifBuilder("claude-code", root="/app")  # Harbor's claude-code agent
    builder.user("The add() tests fail. Make `pytest tests/test_calc.py` pass.")
    failed = "Exit code 1\n" + PYTEST_FAIL.replace("/repo", "/app")
    builder.call("Bash", {"command": "pytest -q tests/test_calc.py"}, failed, error=True)
    edit = {"file_path": "/app/calc.py", "old_string": "a - b", "new_string": "a + b"}
    builder.call("Edit", edit, "The file /app/calc.py has been updated successfully.")
    builder.call("Bash", {"command": "pytest -q tests/test_calc.py"}, "1 passed in 0.01s")
    atif, _ = builder.build()
    atif["session_id"] = "calc__add.1a2b__trial"
    trial = where / "jobs" / "2026-04-13__04-01-12" / "calc__add.1a2b__Xy12"
    (trial / "agent").mkdir(parents=True)
    (trial / "agent" / "trajectory.json").write_text(json.dumps(atif))
    (trial / "verifier").mkdir()
    (trial / "verifier" / "reward.txt").write_text("1\n")
    result = {
        "task_name": "calc__add.1a2b",
        "trial_name": trial.name,
        "config": {"task": {"path": TASK}, "trials_dir": "jobs/2026-04-13__04-01-12"},
    }
    (trial / "result.json").write_text(json.dumps(result))
    return where / "jobs"


def generate(tmp_path: Path, jobs: Path, **source) -> int:
    config = {
        "source": {"kind": "trajectory", "path": str(jobs), "format": "auto", **source},
        "pipeline": {"name": "trajectory_to_env", "options": {"families": ["repair"]}},
        "output": {"destination": str(tmp_path / "out")},
    }
    path = tmp_path / "generate.yaml"
    path.write_text(json.dumps(config))
    with pytest.raises(SystemExit) as exit_:
        call_command("generate", config=str(path))
    return int(exit_.value.code)


def test_a_trial_starts_from_its_tasks_environment_found_beside_the_jobs_folder(tmp_path):
    jobs = harbor_run(tmp_path / "run")
    assert generate(tmp_path, jobs) == 0
    [candidate] = Candidate.objects.all()
    assert candidate.status == "written", candidate.drop_detail
    assert set(candidate.start_files) == {"calc.py", "tests/test_calc.py"}
    assert candidate.changed == {"added": [], "modified": ["calc.py"], "deleted": []}
    seed = candidate.payload["clone"]
    assert (seed["start"], seed["files"]) == ("harbor_task", 2)
    assert seed["how"] == "the task's environment (environment/Dockerfile copies into /app)"
    counts = PipelineRun.objects.get().report["summary"]["clones"]
    assert counts["by_start"] == {"harbor_task": 1} and counts["seeded"] == 1


def test_a_trial_whose_task_folder_is_elsewhere_is_seeded_from_source_tasks(tmp_path):
    jobs = harbor_run(tmp_path / "run")
    moved = tmp_path / "my-tasks" / "calc"
    shutil.move(tmp_path / "run" / TASK, moved)
    assert generate(tmp_path, jobs) == 1  # not beside the jobs folder any more
    [drop] = Candidate.objects.all()
    assert drop.status == "dropped" and "calc.py" in drop.drop_detail
    Candidate.objects.all().delete()
    assert generate(tmp_path, jobs, tasks={"calc__add.1a2b": str(moved)}) == 0
    assert Candidate.objects.get().status == "written"
