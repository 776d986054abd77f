"""generate over a session whose fix patches a file the log never showed, with and without the
user's clone of the project (``source.clones``): dropped without it, mined over its commit with
it, and a clone that cannot say where the session started is a reason on the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from tasks_review.core.clones import clone_line
from tasks_review.models import Candidate, PipelineRun
from tests.tasks_review.clone_story import clone_story, generate_config

pytestmark = pytest.mark.django_db
PINNED = "example.org/traj2env/base@sha256:" + "ab" * 32


@pytest.fixture(autouse=True)
def _no_docker(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "BASE_IMAGE": PINNED, "VERIFY": False}


def generate(path) -> int:
    with pytest.raises(SystemExit) as exit_:
        call_command("generate", config=str(path))
    return int(exit_.value.code)


def test_without_the_clone_the_fix_touches_a_file_the_log_never_showed(tmp_path):
    story = clone_story(tmp_path)
    assert generate(generate_config(tmp_path, story, clones=False)) == 1
    [drop] = Candidate.objects.all()
    assert (drop.status, drop.drop_reason) == ("dropped", "fix_touches_lost_file")
    assert "src/slugify.js" in drop.drop_detail
    run = PipelineRun.objects.get()
    assert run.clones == []
    counts = run.report["summary"]["clones"]
    assert (counts["matched"], counts["start_found"], counts["seeded"]) == (0, 0, 0)


def test_with_the_clone_the_start_is_the_commit_before_the_session_on_its_branch(tmp_path):
    story = clone_story(tmp_path, record_commit=False)
    assert generate(generate_config(tmp_path, story, clones=True)) == 0
    [candidate] = Candidate.objects.all()
    assert candidate.status == "written", candidate.drop_detail
    assert set(candidate.start_files) == set(story.files)
    assert candidate.changed == {"added": [], "modified": ["src/slugify.js"], "deleted": []}
    clone = candidate.payload["clone"]
    assert clone["commit"] == story.start and clone["commit"] != story.later
    assert clone["how"].startswith("the last commit on main before the session started")
    assert (clone["files"], clone["read_disagreements"], clone["reason"]) == (3, 0, "")

    run = PipelineRun.objects.get()
    [entry] = run.clones
    assert entry["trajectory"] == candidate.trajectory_id and entry["commit"] == story.start
    report = json.loads((tmp_path / "out-clone" / "report.json").read_text())
    assert report["clones"] == run.clones
    counts = report["summary"]["clones"]
    assert (counts["matched"], counts["start_found"], counts["seeded"]) == (1, 1, 1)
    assert counts["by_start"] == {"recorded_branch": 1} and counts["no_seed"] == {}
    # The stored replay is still what the log alone shows; only mining saw the clone.
    replay = candidate.trajectory.replay
    assert (replay.files_known, replay.files_lost) == (0, 1)
    # Nothing of the clone's repository enters the task, only the files of its commit.
    assert candidate.task_dir and not list(Path(candidate.task_dir).rglob(".git"))


def test_a_session_on_a_branch_the_clone_lacks_starts_from_the_default_branch_and_says_so(
    tmp_path,
):
    story = clone_story(tmp_path, branch="spike", record_commit=False)
    assert generate(generate_config(tmp_path, story, clones=True)) == 0
    [candidate] = Candidate.objects.all()
    assert candidate.status == "written", candidate.drop_detail
    clone = candidate.payload["clone"]
    assert (clone["commit"], clone["start"]) == (story.start, "default_branch")
    assert clone["how"].startswith("the clone has no branch 'spike' and no merge of it into main")
    counts = PipelineRun.objects.get().report["summary"]["clones"]
    assert counts["by_start"] == {"default_branch": 1} and counts["seeded"] == 1
    assert clone_line(counts) == "1 matched, 1 found a start (1 default_branch), 1 seeded"


def test_a_clone_with_no_history_before_the_session_is_counted_as_matched_without_a_start(
    tmp_path,
):
    story = clone_story(tmp_path, record_commit=False)
    later = "export GIT_COMMITTER_DATE=2026-04-01T00:00:00Z GIT_AUTHOR_DATE=2026-04-01T00:00:00Z"
    story.clone.git("filter-branch", "-f", "--env-filter", later)  # every commit after the session
    assert generate(generate_config(tmp_path, story, clones=True)) == 1
    [entry] = PipelineRun.objects.get().clones
    assert (entry["commit"], entry["no_seed"]) == (None, "no_commit_before_start")
    counts = PipelineRun.objects.get().report["summary"]["clones"]
    assert (counts["matched"], counts["start_found"], counts["seeded"]) == (1, 0, 0)
    assert counts["no_seed"] == {"no_commit_before_start": 1}
