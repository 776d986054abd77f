"""The whole pipeline with Docker: the samples become kept tasks with their trial matrices."""

import json
import subprocess

import pytest
from django.core.management import call_command

from tasks_review.models import Candidate, PipelineRun, TrialRun
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def docker_engine():
    from tasks_review.core.docker import Engine, InfraError

    try:
        return Engine.from_env()
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")


def _containers(run_id: str) -> set[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=traj2env.run={run_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


def test_samples_are_verified_in_docker_and_kept(docker_engine, tmp_path):
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
        trials = TrialRun.objects.filter(candidate=candidate)
        oracle = trials.filter(role="oracle")
        assert oracle.count() == 3 and all(t.reward == 1.0 for t in oracle)
        assert trials.get(role="noop").reward == 0.0
        graded_controls = trials.exclude(role__in=("oracle", "noop")).filter(status="graded")
        assert graded_controls.count() >= 5
        assert all(t.reward == 0.0 for t in graded_controls)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["counts"]["kept"] == 4 and "verify" in report["timings"]
    # Other tests may run trials in parallel; this run's label must have nothing left.
    assert _containers(f"pipeline-{run.id}") == set(), "trial containers were left behind"


def test_a_run_cancelled_while_verifying_starts_no_new_candidate_and_leaves_no_container(
    docker_engine, tmp_path
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
