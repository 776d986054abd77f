"""The verify stage: a written task's trial matrix in Docker, recorded as TrialRun rows."""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from django.db import close_old_connections, transaction

from groundwork.core.docker import Engine, InfraError
from groundwork.core.docker import docker_labels as lbl
from groundwork.core.failures import said
from groundwork.jobs.containers import dead_run_containers_remove
from groundwork.jobs.heartbeat import Heartbeat
from tasks_review.core.pool import run_each
from tasks_review.core.trials.matrix import verify_task
from tasks_review.core.trials.model import MatrixResult, MatrixStatus, TrialDropReason, TrialStatus
from tasks_review.core.trials.runner import Cancelled
from tasks_review.models import Candidate, TrialRun

log = logging.getLogger(__name__)
STAGE = "verify"
REJECTED_DIR = "_rejected"
_STATUS = {
    TrialStatus.GRADED: TrialRun.Status.GRADED,
    TrialStatus.UNGRADED: TrialRun.Status.UNGRADED,
    TrialStatus.SKIPPED: TrialRun.Status.SKIPPED,
}


def candidate_verify(
    *,
    candidate_id: int,
    run_id: str,
    engine: Engine | None = None,
    cancel: threading.Event | None = None,
) -> Candidate | None:
    """Run the candidate's trial matrix and record every trial. None when not claimable or
    deleted meanwhile. ``cancel`` stops the matrix between trials; the candidate is then
    ungraded, for a retry."""
    claimed = Candidate.claim(
        candidate_id,
        # Lanes of one run share its label: remove only what the dead worker's process owned.
        on_reclaim=lambda: dead_run_containers_remove(run_id, engine=engine, include_live=False),
        status=Candidate.Status.VERIFYING,
    )
    if not claimed:
        return None
    candidate = Candidate.objects.filter(id=candidate_id).first()
    if candidate is None:
        return None
    try:
        with Heartbeat(Candidate.objects.filter(id=candidate_id)):
            result = verify_task(candidate.task_dir, run_id=run_id, engine=engine, cancel=cancel)
    except Cancelled as exc:
        result = MatrixResult(
            task_dir=candidate.task_dir,
            status=MatrixStatus.UNGRADED,
            reasons=(f"verification cancelled: {exc}",),
        )
    except Exception as exc:  # a bug in the harness must not read as a verdict on the task
        log.exception("verifying candidate %s", candidate_id)
        result = MatrixResult(
            task_dir=candidate.task_dir,
            status=MatrixStatus.UNGRADED,
            reasons=(f"harness error: {said(exc)}",),
        )
    _record(candidate, result)
    return Candidate.objects.filter(id=candidate_id).first()


# The baseline's drops that a presumed file (``RepairCandidate.presumed``) may explain.
_JUDGES_PRESUMPTIONS = frozenset(
    {TrialDropReason.CHECK_NOT_FAILING_AT_START, TrialDropReason.CHECK_NOT_PASSING_AT_REFERENCE}
)


@transaction.atomic
def _record(candidate: Candidate, result: MatrixResult) -> None:
    # Locked first: a candidate deleted while its matrix ran (with its run) gets no trials.
    if not Candidate.objects.select_for_update().filter(id=candidate.id).exists():
        log.info("candidate %s was deleted during its verification", candidate.id)
        return
    # A retry replaces the previous attempt's trials: the matrix is judged as a whole.
    TrialRun.objects.filter(candidate=candidate).delete()
    TrialRun.objects.bulk_create(
        TrialRun(
            candidate=candidate,
            role=t.name,
            repeat=t.repeat,
            status=_STATUS[t.status],
            reward=t.reward,
            expected=t.expected,
            started_at=t.started,
            finished_at=t.finished,
            duration_ms=int(t.seconds * 1000),
            detail=dict(t.detail),
            logs=t.logs,
        )
        for t in result.trials
    )
    S = Candidate.Status
    update: dict[str, Any] = {
        "verification": result_summary(result),
        "verifier_version": result.verifier_version,
        "check_assertions": result.check.get("assertions"),
        "check_asserted_inputs": result.check.get("asserted_inputs"),
        "check_tests": result.check.get("tests"),
        "grading": str(result.grading.get("grading") or "") if result.kept else "",
    }
    if result.status is MatrixStatus.KEPT:
        update["status"] = S.KEPT
    elif result.status is MatrixStatus.UNGRADED:
        update["status"] = S.UNGRADED
    else:
        drop = result.drop
        detail = drop.detail if drop else "; ".join(result.reasons)
        note = (candidate.payload or {}).get("presumed_note")
        if drop is not None and drop.reason in _JUDGES_PRESUMPTIONS and note:
            detail = f"{detail} {note}"  # the presumption may be what the baseline disproved
        update.update(
            status=S.DROPPED,
            drop_stage=drop.stage if drop else STAGE,
            drop_reason=str(drop.reason) if drop else "trial_matrix_failed",
            drop_detail=detail[:4000],
        )
        update["task_dir"] = _set_aside(Path(candidate.task_dir))
    Candidate.objects.filter(id=candidate.id).update(**update)


def result_summary(result: MatrixResult) -> dict[str, Any]:
    return {
        "status": str(result.status),
        "reasons": list(result.reasons),
        "image": result.image,
        "build_seconds": round(result.build_seconds, 3),
        "check_seconds": round(result.check_seconds, 3),
        "wall_seconds": round(result.wall_seconds, 3),
        "grading": dict(result.grading),
    }


def _set_aside(task_dir: Path) -> str:
    """Move a task that failed verification out of the dataset folder, keeping the evidence."""
    if not task_dir.is_dir():
        return str(task_dir)
    target = task_dir.parent / REJECTED_DIR / task_dir.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        shutil.rmtree(target)
    task_dir.rename(target)
    return str(target)


def candidates_verify(
    *,
    candidate_ids: list[int],
    run_id: str,
    jobs: int,
    on_done: Callable[[], None] | None = None,
    engine: Engine | None = None,
) -> None:
    """Verify several candidates, ``jobs`` at a time (``run_each``'s threads; Docker does the
    work). ``on_done`` runs after each; when it raises (the run was cancelled) no further
    candidate starts, those in flight stop, and their containers are removed."""

    def one(candidate_id: int, stop: threading.Event) -> None:
        try:
            candidate_verify(candidate_id=candidate_id, run_id=run_id, engine=engine, cancel=stop)
        finally:
            close_old_connections()  # each thread has its own connection

    def remove_containers() -> None:
        # A trial blocked in its container ends when the container goes. Live ones are ours:
        # a run id's verifications all happen in this process (queued runs use lanes instead).
        with suppress(InfraError):
            (engine or Engine.from_env()).cleanup(label=lbl.run_filter(run_id), include_live=True)

    outcomes = run_each(
        candidate_ids,
        one,
        jobs=jobs,
        on_done=None if on_done is None else lambda _: on_done(),
        on_cancel=remove_containers,
        name="verify",
    )
    for outcome in outcomes:
        outcome.result()  # a bookkeeping error fails the run, once the others are recorded
