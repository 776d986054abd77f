"""The verify stage's bookkeeping: trial rows, candidate outcome, set-aside folders, retries."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tasks_review.core.trials.model import (
    MatrixResult,
    MatrixStatus,
    Role,
    TrialDrop,
    TrialDropReason,
    TrialRecord,
    TrialStatus,
)
from tasks_review.models import Candidate, PipelineRun, TrialRun
from tasks_review.services import verification
from tests.trajectories.factories import make_trajectory

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 29, tzinfo=UTC)


def trial(name, reward, expected, status=TrialStatus.GRADED, repeat=0):
    role = Role.ORACLE if name == "oracle" else Role.NOOP if name == "noop" else Role.CONTROL
    return TrialRecord(
        role=role,
        name=name,
        repeat=repeat,
        reward=reward,
        expected=expected,
        status=status,
        started=NOW,
        finished=NOW,
        seconds=1.5,
        logs="ok",
    )


@pytest.fixture
def candidate(tmp_path):
    task = tmp_path / "out" / "task-a"
    task.mkdir(parents=True)
    (task / "task.toml").write_text("x")
    run = PipelineRun.objects.create(config={}, destination=str(tmp_path / "out"))
    return Candidate.objects.create(
        run=run,
        trajectory=make_trajectory(),
        family="repair",
        key="k",
        check_command="npm test",
        status="written",
        task_dir=str(task),
    )


def verify_with(monkeypatch, candidate, result):
    monkeypatch.setattr(verification, "verify_task", lambda task_dir, **_: result)
    return verification.candidate_verify(candidate_id=candidate.id, run_id="t")


def test_a_kept_matrix_records_every_trial_and_skipped_controls_as_skipped(monkeypatch, candidate):
    result = MatrixResult(
        task_dir=candidate.task_dir,
        status=MatrixStatus.KEPT,
        trials=(
            trial("oracle", 1.0, 1.0),
            trial("noop", 0.0, 0.0),
            trial("conftest_forces_pass", None, 0.0, TrialStatus.SKIPPED),
        ),
    )
    done = verify_with(monkeypatch, candidate, result)
    assert done.status == Candidate.Status.KEPT
    statuses = dict(TrialRun.objects.values_list("role", "status"))
    assert statuses == {"oracle": "graded", "noop": "graded", "conftest_forces_pass": "skipped"}
    assert done.verification["status"] == "kept"


def test_a_rejected_matrix_drops_the_candidate_and_sets_its_folder_aside(monkeypatch, candidate):
    result = MatrixResult(
        task_dir=candidate.task_dir,
        status=MatrixStatus.REJECTED,
        trials=(trial("oracle", 1.0, 1.0), trial("delete_tests", 1.0, 0.0)),
        reasons=("control delete_tests scored 1.0, must score 0",),
    )
    done = verify_with(monkeypatch, candidate, result)
    assert done.status == Candidate.Status.DROPPED
    assert (done.drop_stage, done.drop_reason) == ("verify", "trial_matrix_failed")
    assert "delete_tests" in done.drop_detail
    assert "/_rejected/task-a" in done.task_dir
    assert Path(done.task_dir, "task.toml").exists() and not Path(candidate.task_dir).exists()


def test_a_check_that_passes_at_start_is_dropped_with_the_trial_layers_reason(
    monkeypatch, candidate
):
    drop = TrialDrop(
        reason=TrialDropReason.CHECK_NOT_FAILING_AT_START, detail="exit 0 at start", stage="check"
    )
    done = verify_with(
        monkeypatch,
        candidate,
        MatrixResult(task_dir=candidate.task_dir, status=MatrixStatus.DROPPED, drop=drop),
    )
    assert (done.drop_stage, done.drop_reason) == ("check", "check_not_failing_at_start")


def test_an_ungraded_matrix_waits_for_a_retry_which_replaces_its_trials(monkeypatch, candidate):
    ungraded = MatrixResult(
        task_dir=candidate.task_dir,
        status=MatrixStatus.UNGRADED,
        trials=(trial("oracle", None, 1.0, TrialStatus.UNGRADED),),
        reasons=("daemon unreachable",),
    )
    assert verify_with(monkeypatch, candidate, ungraded).status == Candidate.Status.UNGRADED
    kept = MatrixResult(
        task_dir=candidate.task_dir,
        status=MatrixStatus.KEPT,
        trials=(trial("oracle", 1.0, 1.0), trial("noop", 0.0, 0.0)),
    )
    assert verify_with(monkeypatch, candidate, kept).status == Candidate.Status.KEPT
    assert TrialRun.objects.count() == 2 and not TrialRun.objects.filter(status="ungraded")


def test_a_harness_bug_is_ungraded_not_a_verdict(monkeypatch, candidate):
    def broken(task_dir, **_):
        raise RuntimeError("bug in the harness")

    monkeypatch.setattr(verification, "verify_task", broken)
    done = verification.candidate_verify(candidate_id=candidate.id, run_id="t")
    assert done.status == Candidate.Status.UNGRADED
    assert "bug in the harness" in done.verification["reasons"][0]


def test_a_candidate_being_verified_is_not_claimed_twice(monkeypatch, candidate):
    from django.utils import timezone

    Candidate.objects.filter(id=candidate.id).update(
        status="verifying",
        created_at=timezone.now() - timedelta(days=30),
        verify_started_at=timezone.now(),
    )
    monkeypatch.setattr(verification, "verify_task", lambda *a, **k: pytest.fail("ran twice"))
    assert verification.candidate_verify(candidate_id=candidate.id, run_id="t") is None


def test_a_verification_whose_worker_died_is_taken_over(monkeypatch, candidate):
    from django.utils import timezone

    Candidate.objects.filter(id=candidate.id).update(
        status="verifying", verify_started_at=timezone.now() - timedelta(days=1)
    )
    kept = MatrixResult(
        task_dir=candidate.task_dir,
        status=MatrixStatus.KEPT,
        trials=(trial("oracle", 1.0, 1.0), trial("noop", 0.0, 0.0)),
    )
    assert verify_with(monkeypatch, candidate, kept).status == Candidate.Status.KEPT
