"""Re-verifying kept tasks that an older grader kept.

A kept task promises that only a real fix earns its reward; a grader that was fooled by hacks
it now catches cannot keep that promise for the tasks it kept. Each kept candidate records the
verifier version that kept it (``Candidate.verifier_version``; ``None`` from before versions
were recorded); those older than ``VERIFIER_VERSION`` are stale.

Re-verifying one writes its task folder again with the current writer (the same candidate gives
the same bytes, so only the grader in ``tests/`` changes and the image is reused) and runs its
whole trial matrix again through the verify stage, which records the new verdict: kept (now by
this version), dropped, or ungraded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from tasks_review.core.trials.version import VERIFIER_VERSION
from tasks_review.models import Candidate
from tasks_review.services.images import base_image_ref
from tasks_review.services.taskwriting import candidate_write_task
from tasks_review.services.verification import candidate_verify


@dataclass(frozen=True, slots=True)
class Reverified:
    candidate_id: int
    before: int | None  # the version that had kept it
    status: str  # the candidate's status now
    after: int | None  # the version that gave the new verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate_id,
            "before": self.before,
            "status": self.status,
            "after": self.after,
        }


def stale_kept(*, run_id: int | None = None) -> QuerySet[Candidate]:
    """Kept candidates whose verdict an older verifier gave, oldest first."""
    stale = (
        # Authored tasks are graded by their own tests: no writer to rewrite them.
        Candidate.objects.filter(Candidate.MINED, status=Candidate.Status.KEPT).filter(
            Q(verifier_version__isnull=True) | Q(verifier_version__lt=VERIFIER_VERSION)
        )
    )
    if run_id is not None:
        stale = stale.filter(run_id=run_id)
    return stale.order_by("id")


def candidate_reverify(
    *, candidate_id: int, run_id: str, engine: Any = None, base_image: str | None = None
) -> Reverified | None:
    """Write one stale kept candidate's task again and verify it; None when it is not (or no
    longer) a stale kept candidate."""
    candidate = stale_kept().filter(id=candidate_id).first()
    if candidate is None:
        return None
    before = candidate.verifier_version
    # KEPT -> WRITTEN claims it: a second reverify of the same candidate finds it not stale.
    claimed = (
        stale_kept()
        .filter(id=candidate_id)
        .update(status=Candidate.Status.WRITTEN, verify_started_at=timezone.now())
    )
    if not claimed:
        return None
    task_dir = Path(candidate.task_dir)
    written = candidate_write_task(
        candidate=candidate,
        destination=task_dir.parent,
        task_name=candidate.task_name or task_dir.name,
        base_image=base_image or base_image_ref(),
    )
    if written:
        candidate_verify(candidate_id=candidate_id, run_id=run_id, engine=engine)
    candidate.refresh_from_db()
    return Reverified(candidate_id, before, candidate.status, candidate.verifier_version)


def candidates_reverify(
    *, run_id: int | None = None, engine: Any = None, base_image: str | None = None
) -> list[Reverified]:
    """Re-verify every stale kept candidate (of one pipeline run, or all), one at a time."""
    done = []
    for candidate_id in list(stale_kept(run_id=run_id).values_list("id", flat=True)):
        outcome = candidate_reverify(
            candidate_id=candidate_id,
            run_id=f"reverify-{candidate_id}",
            engine=engine,
            base_image=base_image,
        )
        if outcome is not None:
            done.append(outcome)
    return done
