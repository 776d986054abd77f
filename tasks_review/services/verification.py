"""The verify stage: a written task's trial matrix in Docker, recorded as TrialRun rows."""

from __future__ import annotations

import logging
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import Q
from django.utils import timezone

from tasks_review.core.trials.matrix import verify_task
from tasks_review.core.trials.model import MatrixResult, MatrixStatus, TrialStatus
from tasks_review.models import Candidate, TrialRun

log = logging.getLogger(__name__)
STAGE = "verify"
REJECTED_DIR = "_rejected"
_STATUS = {
    TrialStatus.GRADED: TrialRun.Status.GRADED,
    TrialStatus.UNGRADED: TrialRun.Status.UNGRADED,
    TrialStatus.SKIPPED: TrialRun.Status.SKIPPED,
}


def _claim(candidate_id: int) -> bool:
    """WRITTEN or UNGRADED (a retry) -> VERIFYING; a stale VERIFYING is one whose worker died."""
    S = Candidate.Status
    now = timezone.now()
    stale = now - timedelta(seconds=int(settings.Q_CLUSTER["timeout"]))  # type: ignore[arg-type]
    return bool(
        Candidate.objects.filter(id=candidate_id)
        .filter(
            Q(status__in=(S.WRITTEN, S.UNGRADED))
            | Q(status=S.VERIFYING, verify_started_at__lt=stale)
        )
        .update(status=S.VERIFYING, verify_started_at=now)
    )


def candidate_verify(*, candidate_id: int, run_id: str, engine: Any = None) -> Candidate | None:
    """Run the candidate's trial matrix and record every trial. None when not claimable."""
    if not _claim(candidate_id):
        return None
    candidate = Candidate.objects.get(id=candidate_id)
    try:
        result = verify_task(candidate.task_dir, run_id=run_id, engine=engine)
    except Exception as exc:  # a bug in the harness must not read as a verdict on the task
        log.exception("verifying candidate %s", candidate_id)
        result = MatrixResult(
            task_dir=candidate.task_dir,
            status=MatrixStatus.UNGRADED,
            reasons=(f"harness error: {type(exc).__name__}: {exc}",),
        )
    _record(candidate, result)
    candidate.refresh_from_db()
    return candidate


@transaction.atomic
def _record(candidate: Candidate, result: MatrixResult) -> None:
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
    }
    if result.status is MatrixStatus.KEPT:
        update["status"] = S.KEPT
    elif result.status is MatrixStatus.UNGRADED:
        update["status"] = S.UNGRADED
    else:
        drop = result.drop
        update.update(
            status=S.DROPPED,
            drop_stage=drop.stage if drop else STAGE,
            drop_reason=str(drop.reason) if drop else "trial_matrix_failed",
            drop_detail=(drop.detail if drop else "; ".join(result.reasons))[:4000],
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


def candidates_verify(*, candidate_ids: list[int], run_id: str, jobs: int, on_done=None) -> None:
    """Verify several candidates, ``jobs`` at a time in threads (Docker does the work)."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    def one(candidate_id: int) -> None:
        try:
            candidate_verify(candidate_id=candidate_id, run_id=run_id)
        finally:
            close_old_connections()  # each thread has its own connection

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="verify") as pool:
        for future in as_completed([pool.submit(one, i) for i in candidate_ids]):
            future.result()
            if on_done:
                on_done()
