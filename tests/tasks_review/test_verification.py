"""The verify stage's bookkeeping: trial rows, candidate outcome, set-aside folders, retries."""

import dataclasses
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

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
from tests.groundwork.core.docker.fakes import FakeEngine
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
    # Mining presumed a file unchanged that a script may have changed: the drop names it.
    note = "1 file is presumed unchanged (…), since `make gen` at event 2: tests/test_calc.py."
    Candidate.objects.filter(id=candidate.id).update(payload={"presumed_note": note})
    candidate.refresh_from_db()
    drop = TrialDrop(
        reason=TrialDropReason.CHECK_NOT_FAILING_AT_START, detail="exit 0 at start", stage="check"
    )
    done = verify_with(
        monkeypatch,
        candidate,
        MatrixResult(task_dir=candidate.task_dir, status=MatrixStatus.DROPPED, drop=drop),
    )
    assert (done.drop_stage, done.drop_reason) == ("check", "check_not_failing_at_start")
    assert done.drop_detail == f"exit 0 at start {note}"


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
    Candidate.objects.filter(id=candidate.id).update(
        status="verifying",
        created_at=timezone.now() - timedelta(days=30),
        verify_started_at=timezone.now(),
    )
    monkeypatch.setattr(verification, "verify_task", lambda *a, **k: pytest.fail("ran twice"))
    assert verification.candidate_verify(candidate_id=candidate.id, run_id="t") is None


def test_a_verification_whose_worker_died_is_taken_over(monkeypatch, candidate):
    Candidate.objects.filter(id=candidate.id).update(
        status="verifying", verify_started_at=timezone.now() - timedelta(days=1)
    )
    kept = MatrixResult(
        task_dir=candidate.task_dir,
        status=MatrixStatus.KEPT,
        trials=(trial("oracle", 1.0, 1.0), trial("noop", 0.0, 0.0)),
    )
    assert verify_with(monkeypatch, candidate, kept).status == Candidate.Status.KEPT


def test_a_candidate_deleted_while_its_matrix_ran_gets_no_trials(monkeypatch, candidate):
    def matrix_then_deleted(task_dir, **_):
        Candidate.objects.filter(id=candidate.id).delete()
        return MatrixResult(
            task_dir=task_dir, status=MatrixStatus.KEPT, trials=(trial("oracle", 1.0, 1.0),)
        )

    monkeypatch.setattr(verification, "verify_task", matrix_then_deleted)
    assert verification.candidate_verify(candidate_id=candidate.id, run_id="t") is None
    assert not TrialRun.objects.exists()


def written_candidates(tmp_path: Path, n: int) -> list[int]:
    """Candidates t0, t1, ... of one run, written and waiting for verification."""
    run = PipelineRun.objects.create(config={}, destination=str(tmp_path))
    return [
        Candidate.objects.create(
            run=run,
            trajectory=make_trajectory(),
            family="repair",
            key=f"k{i}",
            check_command="npm test",
            status="written",
            task_dir=str(tmp_path / f"t{i}"),
        ).id
        for i in range(n)
    ]


class RunCancelled(Exception):
    pass


@pytest.mark.django_db(transaction=True)
def test_a_cancel_starts_no_new_candidate_and_removes_the_runs_containers(monkeypatch, tmp_path):
    ids = written_candidates(tmp_path, 5)
    engine = FakeEngine()
    blocked = threading.Event()

    def matrix(task_dir, *, engine, cancel, **_):
        if task_dir.endswith("t0"):
            blocked.wait(10)  # finish (and so get cancelled) once t1 is in its container
            return MatrixResult(task_dir=task_dir, status=MatrixStatus.KEPT)
        blocked.set()
        gone = engine.removed.wait(10)
        return MatrixResult(
            task_dir=task_dir,
            status=MatrixStatus.UNGRADED,
            reasons=("container removed" if gone else "ran to its end",),
        )

    def cancelled_from_the_page() -> None:
        raise RunCancelled()

    monkeypatch.setattr(verification, "verify_task", matrix)
    with pytest.raises(RunCancelled):
        verification.candidates_verify(
            candidate_ids=ids,
            run_id="pipeline-9",
            jobs=2,
            on_done=cancelled_from_the_page,
            engine=engine,
        )
    assert engine.cleanups == [("traj2env.run=pipeline-9", True)]
    rows = dict(Candidate.objects.filter(id__in=ids).values_list("task_dir", "status"))
    assert rows[str(tmp_path / "t0")] == "kept"
    assert rows[str(tmp_path / "t1")] == "ungraded"
    verified = Candidate.objects.get(task_dir=str(tmp_path / "t1")).verification
    assert verified["reasons"] == ["container removed"]
    # At most one more candidate was picked up before the cancel; the rest never started.
    assert sorted(rows.values()).count("written") >= 2


@pytest.mark.django_db(transaction=True)
def test_a_bookkeeping_error_in_one_candidate_still_verifies_the_others(monkeypatch, tmp_path):
    ids = written_candidates(tmp_path, 3)

    def matrix(task_dir, **_):
        # t1's trial carries what a JSON field cannot store: recording it fails.
        detail = {"bad": object()} if task_dir.endswith("t1") else {}
        oracle = dataclasses.replace(trial("oracle", 1.0, 1.0), detail=detail)
        return MatrixResult(task_dir=task_dir, status=MatrixStatus.KEPT, trials=(oracle,))

    monkeypatch.setattr(verification, "verify_task", matrix)
    with pytest.raises(TypeError, match="not JSON serializable"):
        verification.candidates_verify(candidate_ids=ids, run_id="t", jobs=1)
    statuses = list(Candidate.objects.order_by("key").values_list("status", flat=True))
    assert statuses == ["kept", "verifying", "kept"]


def test_a_candidate_left_verifying_by_a_dead_worker_is_taken_over_after_its_containers_go(
    monkeypatch, candidate
):
    silent = timezone.now() - timedelta(minutes=5)  # 10 beats of 30 s
    Candidate.objects.filter(pk=candidate.pk).update(
        status="verifying", verify_started_at=silent, heartbeat_at=silent
    )
    engine = FakeEngine()
    seen: list[list[tuple[str, bool]]] = []

    def matrix(task_dir, *, engine, **_):
        seen.append(list(engine.cleanups))  # what was removed before the new attempt began
        return MatrixResult(task_dir=task_dir, status=MatrixStatus.UNGRADED, reasons=("x",))

    monkeypatch.setattr(verification, "verify_task", matrix)
    run_id = f"pipeline-{candidate.run_id}"
    assert verification.candidate_verify(candidate_id=candidate.pk, run_id=run_id, engine=engine)
    # Lanes share the run's label: only the dead process's containers (not live ones) go.
    assert seen == [[(f"traj2env.run={run_id}", False)]]


def test_a_candidate_whose_worker_still_beats_is_left_alone(monkeypatch, candidate):
    Candidate.objects.filter(pk=candidate.pk).update(
        status="verifying",
        verify_started_at=timezone.now() - timedelta(minutes=5),
        heartbeat_at=timezone.now(),
    )
    engine = FakeEngine()
    monkeypatch.setattr(verification, "verify_task", lambda *a, **k: pytest.fail("ran twice"))
    assert (
        verification.candidate_verify(candidate_id=candidate.pk, run_id="r", engine=engine) is None
    )
    assert engine.cleanups == []
