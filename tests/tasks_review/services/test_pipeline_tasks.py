"""generate over a Harbor trial whose fix edits a file the log never showed: dropped without its
task folder, mined over the files the task's environment lays in the image with it (given in
``source.tasks``, or found beside the jobs folder)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.core.management import call_command

from tasks_review.models import Candidate, PipelineRun
from tests.tasks_review.core.mining.repair_helpers import CALC_BUGGY, PYTEST_FAIL, TEST_CALC
from trajectories.core.replay.synthetic import AtifBuilder

pytestmark = pytest.mark.django_db
PINNED = "example.org/traj2env/base@sha256:" + "ab" * 32
TASK = "datasets/swesmith/calc__add.1a2b"


@pytest.fixture(autouse=True)
def _no_docker(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "BASE_IMAGE": PINNED, "VERIFY": False}


@dataclass(frozen=True)
class Story:
    """What the trial's task lays in /app, the check the agent runs (failing, then passing),
    its one-line fix to the first file, and a command run between the runs."""

    files: dict[str, str] = field(
        default_factory=lambda: {"calc.py": CALC_BUGGY, "tests/test_calc.py": TEST_CALC}
    )
    check: str = "pytest -q tests/test_calc.py"
    fail_output: str = PYTEST_FAIL.replace("/repo", "/app")
    pass_output: str = "1 passed in 0.01s"
    fix: tuple[str, str] = ("a - b", "a + b")
    between: str | None = None


def harbor_run(where: Path, story: Story = Story()) -> Path:
    """A harbor run folder: the task under datasets/ and one trial under jobs/. The agent runs
    the check (it fails), edits the first file and runs it again; it never shows any file."""
    task = where / TASK
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text('version = "1.0"\n')
    (task / "tests" / "test.sh").write_text("#!/bin/sh\nexit 0\n")  # the verifier's own
    (task / "environment" / "Dockerfile").write_text(
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app/\n"
    )
    (task / "environment" / ".dockerignore").write_text("Dockerfile\n.dockerignore\n")
    for name, text in story.files.items():
        (task / "environment" / name).parent.mkdir(parents=True, exist_ok=True)
        (task / "environment" / name).write_text(text)

    builder = AtifBuilder("claude-code", root="/app")  # Harbor's claude-code agent
    builder.user(f"The tests fail. Make `{story.check}` pass.")
    failed = "Exit code 1\n" + story.fail_output
    builder.call("Bash", {"command": story.check}, failed, error=True)
    if story.between is not None:
        builder.call("Bash", {"command": story.between}, "")
    old, new = story.fix
    edit = {"file_path": f"/app/{next(iter(story.files))}", "old_string": old, "new_string": new}
    builder.call("Edit", edit, "The file has been updated successfully.")
    builder.call("Bash", {"command": story.check}, story.pass_output)
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
