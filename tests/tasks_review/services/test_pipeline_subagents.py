"""The pipeline mines a fix a Task subagent made: its edit is in the parent's replay."""

import pytest

from tasks_review.core.config import parse_config
from tasks_review.models import Candidate
from tasks_review.services.pipeline import pipeline_run_create, pipeline_run_execute
from tests.trajectories.services.test_sessions_subagents import BUGGY, FIXED, PARENT, write_pair
from trajectories.store import DbBlobs

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_docker")]


def run_pipeline(source, out) -> list[Candidate]:
    config = parse_config(
        {
            "source": {"path": str(source), "format": "auto"},
            "pipeline": {"name": "trajectory_to_env"},
            "output": {"destination": str(out)},
        },
        base_dir=out,
    )
    run = pipeline_run_create(config=config)
    pipeline_run_execute(run_id=run.id)
    return list(Candidate.objects.filter(run=run, trajectory__session_id=PARENT))


def texts(files: dict[str, str]) -> dict[str, str]:
    return {path: DbBlobs().get(sha).decode() for path, sha in files.items()}


def test_the_pipeline_mines_the_parents_repair_with_the_subagents_fix_as_reference(tmp_path):
    write_pair(tmp_path / "logs")
    (candidate,) = run_pipeline(tmp_path / "logs", tmp_path / "out")
    assert candidate.status != Candidate.Status.DROPPED, candidate.payload
    assert texts(candidate.start_files)["calc.py"] == BUGGY
    assert texts(candidate.reference_files)["calc.py"] == FIXED


def test_without_the_subagents_log_the_pipeline_drops_that_repair(tmp_path):
    parent, _ = write_pair(tmp_path / "logs")
    (candidate,) = run_pipeline(parent, tmp_path / "out")
    assert candidate.status == Candidate.Status.DROPPED
    assert candidate.drop_reason == "fix_touches_lost_file"
