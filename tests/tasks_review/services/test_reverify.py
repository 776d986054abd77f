"""Kept tasks record the verifier that kept them; those kept by an older one are verified again."""

from __future__ import annotations

import json
from hashlib import sha256
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tasks_review.core.trials.model import MatrixResult, MatrixStatus
from tasks_review.core.trials.version import VERIFIER_VERSION
from tasks_review.models import Candidate
from tasks_review.services import reverify, verification
from tasks_review.services.taskwriting import candidate_payload
from tests.tasks_review.core.trials.helpers import FAKE_BASE, PYTHON_FIX, PYTHON_START, handmade
from tests.tasks_review.factories import make_candidate, make_run
from trajectories.store import DbBlobs

pytestmark = pytest.mark.django_db
OLD = VERIFIER_VERSION - 1


def kept(version, **fields) -> Candidate:
    return make_candidate(verifier_version=version, trials=False, **fields)


def test_stale_kept_candidates_are_the_kept_ones_an_older_verifier_kept():
    run, other = make_run(), make_run()
    before_versions = kept(None, run=run)
    older = kept(OLD, run=run)
    current = kept(VERIFIER_VERSION, run=run)
    dropped = kept(OLD, run=run, status=Candidate.Status.DROPPED)
    elsewhere = kept(OLD, run=other)
    assert list(reverify.stale_kept()) == [before_versions, older, elsewhere]
    assert list(reverify.stale_kept(run_id=run.id)) == [before_versions, older]
    assert before_versions.verifier_stale and older.verifier_stale
    assert not current.verifier_stale and not dropped.verifier_stale


def result(task_dir: str, status=MatrixStatus.KEPT) -> MatrixResult:
    check = {"assertions": 5, "asserted_inputs": 2, "tests": 3, "too_thin": True}
    return MatrixResult(task_dir=task_dir, status=status, check=check)


def test_the_verify_stage_records_the_verifier_version_and_how_much_the_check_asserts(
    monkeypatch, tmp_path
):
    task = tmp_path / "out" / "task"
    task.mkdir(parents=True)
    candidate = kept(None, status=Candidate.Status.WRITTEN, task_dir=str(task))
    monkeypatch.setattr(verification, "verify_task", lambda task_dir, **_: result(task_dir))
    done = verification.candidate_verify(candidate_id=candidate.id, run_id="t")
    assert (done.status, done.verifier_version) == (Candidate.Status.KEPT, VERIFIER_VERSION)
    assert (done.check_assertions, done.check_asserted_inputs, done.check_tests) == (5, 2, 3)
    assert done.check_too_thin is True


@pytest.fixture
def written(tmp_path) -> Candidate:
    """A kept candidate with a real payload, its task kept by the previous verifier."""
    blobs = DbBlobs()
    mined = handmade(
        blobs,
        PYTHON_START,
        PYTHON_FIX,
        command="python3 -m unittest discover -s tests",
        language="python",
        runner="unittest",
    )
    blobs.flush()
    task_dir = tmp_path / "out" / "repair-ops"
    task_dir.mkdir(parents=True)
    (task_dir / "stale-grader").write_text("from an older verifier")
    (task_dir / "tests").mkdir()
    (task_dir / "tests" / "probes.json").write_text('{"version": 1, "probes": []}')
    return kept(
        OLD,
        payload=candidate_payload(mined),
        task_name="repair-ops",
        task_dir=str(task_dir),
    )


def test_reverifying_writes_the_grader_anew_and_records_the_new_verdict(monkeypatch, written):
    seen = []

    def verify_task(task_dir, **_):
        grading = json.loads((Path(task_dir) / "tests" / "grading.json").read_text())
        seen.append(grading["verifier_version"])
        # The older verifier's probes are gone: the matrix draws the task's probes anew
        # (trials.baseline.stored_probes reuses only those of a task kept by this one).
        assert not (Path(task_dir) / "tests" / "probes.json").exists()
        assert "probes" not in grading
        return result(task_dir)

    monkeypatch.setattr(verification, "verify_task", verify_task)
    done = reverify.candidate_reverify(candidate_id=written.id, run_id="t", base_image=FAKE_BASE)
    assert done == reverify.Reverified(written.id, OLD, "kept", VERIFIER_VERSION)
    assert seen == [VERIFIER_VERSION]  # the matrix ran on the task as written now
    assert not (Path(written.task_dir) / "stale-grader").exists()
    assert reverify.candidate_reverify(candidate_id=written.id, run_id="t") is None


def test_a_task_the_current_verifier_rejects_is_dropped_when_reverified(monkeypatch, written):
    rejected = MatrixResult(
        task_dir=written.task_dir, status=MatrixStatus.REJECTED, reasons=("hack scored 1.0",)
    )
    monkeypatch.setattr(verification, "verify_task", lambda task_dir, **_: rejected)
    (done,) = reverify.candidates_reverify(base_image=FAKE_BASE)
    assert (done.status, done.after) == ("dropped", VERIFIER_VERSION)
    assert Candidate.objects.get(id=written.id).drop_reason == "trial_matrix_failed"


def test_the_reverify_command_says_what_it_did_as_json(monkeypatch, written):
    monkeypatch.setattr(verification, "verify_task", lambda task_dir, **_: result(task_dir))
    monkeypatch.setattr(
        "tasks_review.management.commands.reverify.base_image_ref", lambda: FAKE_BASE
    )
    out = StringIO()
    call_command("reverify", "--run", str(written.run_id), "--json", stdout=out)
    assert json.loads(out.getvalue()) == [
        {"candidate": written.id, "before": OLD, "status": "kept", "after": VERIFIER_VERSION}
    ]
    out = StringIO()
    call_command("reverify", "--all-stale", stdout=out)
    assert "no stale kept task" in out.getvalue()


def test_the_reverify_command_needs_a_run_or_all_stale():
    with pytest.raises(CommandError):
        call_command("reverify")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_sample_kept_by_the_previous_verifier_is_verified_again_in_docker(tmp_path):
    from groundwork.core.docker import Engine, InfraError
    from tests.conftest import SAMPLES

    try:
        Engine.from_env()
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")
    sample = next((SAMPLES / "pi").glob("*.jsonl"))
    config = tmp_path / "one.yaml"
    config.write_text(
        f"source: {{kind: trajectory, path: {sample}, format: auto}}\n"
        "pipeline: {name: trajectory_to_env, options: {families: [repair], jobs: 1}}\n"
        f"output: {{destination: {tmp_path / 'out'}}}\n"
    )
    with pytest.raises(SystemExit):
        call_command("generate", config=str(config))
    (candidate,) = Candidate.objects.filter(status=Candidate.Status.KEPT)
    assert candidate.verifier_version == VERIFIER_VERSION
    Candidate.objects.filter(id=candidate.id).update(verifier_version=OLD)
    out = StringIO()
    call_command("reverify", "--run", str(candidate.run_id), "--json", stdout=out)
    assert json.loads(out.getvalue()) == [
        {"candidate": candidate.id, "before": OLD, "status": "kept", "after": VERIFIER_VERSION}
    ]
    candidate.refresh_from_db()
    assert candidate.trials.filter(role="oracle", reward=1.0).count() == 3
    assert candidate.check_asserted_inputs == 6 and not candidate.check_too_thin
    # Verified again with probes of its own, recorded where the task's grader checks them.
    tests = Path(candidate.task_dir) / "tests"
    grading = json.loads((tests / "grading.json").read_text())
    data = (tests / "probes.json").read_bytes()
    assert grading["probes"] == {
        "count": grading["probes"]["count"],
        "sha256": sha256(data).hexdigest(),
    }
    assert json.loads(data)["version"] == 2 and candidate.grading == "equivalence"
