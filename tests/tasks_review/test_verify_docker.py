"""The whole pipeline with Docker: the samples become kept tasks with their trial matrices, and
a session whose fix patches a file the log never showed is kept over the user's clone."""

import json
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest
from django.core.management import call_command

from tasks_review.models import Candidate, PipelineRun, TrialRun
from tests.conftest import SAMPLES
from tests.tasks_review.clone_story import clone_story, generate_config

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _containers(run_id: str) -> set[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=traj2env.run={run_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


def test_samples_are_verified_in_docker_and_kept(docker_engine, tmp_path, unique_run_ids):
    config = tmp_path / "samples.yaml"
    config.write_text(
        f"source: {{kind: trajectory, path: {SAMPLES}, format: auto}}\n"
        "pipeline: {name: trajectory_to_env, options: {families: [repair], jobs: 2}}\n"
        f"output: {{destination: {tmp_path / 'out'}}}\n"
    )
    with pytest.raises(SystemExit) as exit_:
        call_command("generate", config=str(config))
    assert exit_.value.code == 0

    run = PipelineRun.objects.get()
    assert run.counts["kept"] == 4 and run.counts["ungraded"] == 0
    for candidate in Candidate.objects.filter(run=run):
        assert candidate.status == Candidate.Status.KEPT, candidate.verification
        # Every sample's reward is decided by hidden equivalence probes, not the check alone.
        assert candidate.grading == Candidate.Grading.EQUIVALENCE, candidate.verification
        toml = (Path(candidate.task_dir) / "task.toml").read_text()
        assert 'grading = "equivalence"' in toml
        assert (Path(candidate.task_dir) / "tests" / "probes.json").stat().st_mode & 0o777 == 0o600
        trials = TrialRun.objects.filter(candidate=candidate)
        oracle = trials.filter(role="oracle")
        assert oracle.count() == 3 and all(t.reward == 1.0 for t in oracle)
        assert trials.get(role="noop").reward == 0.0
        graded_controls = trials.exclude(role__in=("oracle", "noop")).filter(status="graded")
        assert graded_controls.count() >= 5
        assert all(t.reward == 0.0 for t in graded_controls)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["counts"]["kept"] == 4 and "verify" in report["timings"]
    assert report["summary"]["grading"] == {"equivalence": 4, "check-only": 0}
    # Other tests may run trials in parallel; this run's label must have nothing left.
    assert _containers(f"pipeline-{run.id}") == set(), "trial containers were left behind"


def test_a_run_cancelled_while_verifying_starts_no_new_candidate_and_leaves_no_container(
    docker_engine, tmp_path, unique_run_ids
):
    from tasks_review.core.config import parse_config
    from tasks_review.services.pipeline import pipeline_run_create, pipeline_run_execute

    config = parse_config(
        {
            "source": {"path": str(SAMPLES), "format": "auto"},
            "pipeline": {"name": "trajectory_to_env", "options": {"jobs": 2}},
            "output": {"destination": str(tmp_path / "out")},
        },
        base_dir=tmp_path,
    )
    run = pipeline_run_create(config=config)

    def cancel_on_entering_verify(event):
        # As if someone pressed Cancel on the run's page: the run stops at its next item.
        if event.stage == "verify":
            PipelineRun.objects.filter(id=event.run).update(cancel_requested=True)

    done = pipeline_run_execute(run_id=run.id, progress=cancel_on_entering_verify)
    assert done.status == "cancelled"
    statuses = list(Candidate.objects.filter(run=run).values_list("status", flat=True))
    assert len(statuses) == 4
    # Two matrices ran at once; the first to finish ended the stage, the other was stopped
    # (ungraded, for a retry) and at most one more had been picked up meanwhile.
    assert statuses.count("kept") >= 1 and statuses.count("written") >= 1
    for candidate in Candidate.objects.filter(run=run, status="ungraded"):
        assert candidate.verification["reasons"], candidate.verification  # it says why
    assert _containers(f"pipeline-{run.id}") == set(), "trial containers were left behind"


# -- the user's own clone: a fix to a file the log never showed -----------------------------------


def _generate(path: Path) -> int:
    with pytest.raises(SystemExit) as exit_:
        call_command("generate", config=str(path))
    return int(exit_.value.code)


def test_a_clone_backed_session_whose_fix_touches_an_unseen_file_is_kept(docker_engine, tmp_path):
    story = clone_story(tmp_path)  # Codex recorded the commit it started from

    assert _generate(generate_config(tmp_path, story, clones=False)) == 1
    without = PipelineRun.objects.get()
    [drop] = Candidate.objects.filter(run=without)
    assert drop.drop_stage == "mine"
    assert drop.drop_reason == "fix_touches_lost_file"

    assert _generate(generate_config(tmp_path, story, clones=True)) == 0
    run = PipelineRun.objects.exclude(id=without.id).get()
    assert run.counts["kept"] == 1 and run.counts["ungraded"] == 0
    [kept] = Candidate.objects.filter(run=run)
    assert kept.status == Candidate.Status.KEPT, kept.verification
    trials = TrialRun.objects.filter(candidate=kept)
    assert [t.reward for t in trials.filter(role="oracle")] == [1.0, 1.0, 1.0]
    assert trials.get(role="noop").reward == 0.0
    assert kept.payload["clone"]["commit"] == story.start
    assert kept.payload["clone"]["how"] == "recorded by the session"

    # The task holds the commit's files and nothing of the clone's repository: the image
    # makes its own single synthetic commit of them.
    task = Path(kept.task_dir)
    project = task / "environment" / "project"
    laid = {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()}
    assert laid == set(story.files)
    assert not list(task.rglob(".git"))
    assert (project / "src/slugify.js").read_text() == story.files["src/slugify.js"]
    unpacked = tmp_path / "repository"
    with tarfile.open(task / "environment" / "repository.tar") as tar:
        tar.extractall(unpacked, filter="data")
    log = subprocess.run(
        ["git", "-C", str(unpacked), "log", "--format=%s"], capture_output=True, text=True
    )
    assert log.stdout.splitlines() == ["Starting state"]  # one synthetic commit, no history
    metadata = tomllib.loads((task / "task.toml").read_text())["metadata"]
    assert metadata["family"] == "repair"
    assert metadata["repo2env"]["source_trace"]["clone"] == {
        "commit": story.start,
        "how": "recorded by the session",
    }
    report = json.loads((tmp_path / "out-clone" / "report.json").read_text())
    counts = report["summary"]["clones"]
    assert (counts["matched"], counts["seeded"]) == (1, 1)
    assert counts["by_start"] == {"recorded_commit": 1}


# -- a Harbor trial over its task's environment, a script between its runs ---------------------


def test_a_harbor_trial_with_a_script_between_its_runs_is_kept_over_its_tasks_environment(
    docker_engine, tmp_path
):
    """The trial never shows a file: its start is what the task's Dockerfile copies into /app.
    `make gen` ran between the runs, so every file is presumed unchanged since; the baseline in
    the image agrees, and the task is kept with the presumption named."""
    from tests.tasks_review.services.test_pipeline_tasks import Story, harbor_run
    from tests.tasks_review.test_shapes_docker import (
        UNITTEST_FAIL,
        UNITTEST_PASS,
        WORDS,
        WORDS_TEST,
    )

    story = Story(
        files={"words.py": WORDS, "test_words.py": WORDS_TEST, "Makefile": "gen:\n\t./gen.sh\n"},
        check="python3 -m unittest -v test_words",
        fail_output=UNITTEST_FAIL,
        pass_output=UNITTEST_PASS,
        fix=("text.split(' ')", "text.split()"),
        between="make gen",
    )
    jobs = harbor_run(tmp_path / "run", story)
    config = tmp_path / "harbor.yaml"
    config.write_text(
        f"source: {{kind: trajectory, path: {jobs}, format: auto}}\n"
        "pipeline: {name: trajectory_to_env, options: {families: [repair]}}\n"
        f"output: {{destination: {tmp_path / 'out'}}}\n"
    )
    assert _generate(config) == 0
    [kept] = Candidate.objects.all()
    assert kept.status == Candidate.Status.KEPT, (kept.drop_detail, kept.verification)
    assert kept.payload["clone"]["start"] == "harbor_task"
    assert "since `make gen`" in kept.payload["presumed_note"]
    trials = TrialRun.objects.filter(candidate=kept)
    assert [t.reward for t in trials.filter(role="oracle")] == [1.0, 1.0, 1.0]
    assert trials.get(role="noop").reward == 0.0
