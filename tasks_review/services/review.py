"""Writes of the review desk: reservations, decisions, adjudication and dataset exports.

Every function checks the caller's role itself (views check too; a script or a worker calling a
service must not slip past), refuses illegal transitions with a ReviewError, and writes its
AuditEvent in the same transaction as the change it records.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .. import selectors
from ..models import AuditEvent, Candidate, DatasetExport, Review

REVIEW = "tasks_review.review_candidate"
ADJUDICATE = "tasks_review.adjudicate_candidate"
EXPORT = "tasks_review.export_dataset"

Decision = Review.Decision
Reason = Review.Reason
ReviewStatus = Candidate.ReviewStatus

# "Good task" is what an accept says; a reject or needs-fix must name what is wrong.
ACCEPT_REASONS = frozenset({Reason.GOOD, Reason.OTHER})
PROBLEM_REASONS = frozenset(set(Reason) - {Reason.GOOD})
OUTCOME = {
    Decision.ACCEPT: ReviewStatus.ACCEPTED,
    Decision.REJECT: ReviewStatus.REJECTED,
    Decision.NEEDS_FIX: ReviewStatus.NEEDS_FIX,
}


class ReviewError(Exception):
    """An action the review desk refuses; the message says why, for the person who tried."""


class NotPermitted(ReviewError, PermissionDenied):
    """The user's role does not allow this action (Django answers 403)."""


class InvalidDecision(ReviewError):
    """A decision, reason or comment that does not make sense together."""


class NotReviewable(ReviewError):
    """The candidate is not (or no longer) open for this action."""


class AlreadyReviewed(ReviewError):
    pass


class Reserved(ReviewError):
    """Someone else holds the candidate."""


class NotReserved(ReviewError):
    pass


class ExportRefused(ReviewError):
    pass


# -- helpers ---------------------------------------------------------------------------------------


def _require(user: AbstractBaseUser, perm: str, action: str) -> None:
    if not user.is_authenticated or not user.has_perm(perm):
        raise NotPermitted(f"{user.get_username() or 'anonymous'} may not {action}")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _audit(
    *,
    actor: AbstractBaseUser | None,
    verb: str,
    target: Candidate | DatasetExport,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> AuditEvent:
    target_type = "candidate" if isinstance(target, Candidate) else "dataset_export"
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        verb=verb,
        target_type=target_type,
        target_id=str(target.pk),
        before=before,
        after=after,
    )


def _locked(candidate_id: int) -> Candidate:
    try:
        # select_for_update serialises concurrent decisions on PostgreSQL; SQLite's IMMEDIATE
        # transactions (settings) already take the write lock when the block opens.
        return (
            Candidate.objects.select_for_update().select_related("reserved_by").get(pk=candidate_id)
        )
    except Candidate.DoesNotExist:
        raise NotReviewable(f"candidate {candidate_id} does not exist") from None


def _holding(candidate: Candidate, now: datetime) -> dict[str, Any]:
    active = candidate.reserved_until is not None and candidate.reserved_until > now
    holder = candidate.reserved_by.get_username() if candidate.reserved_by else None
    state: dict[str, Any] = {
        "reserved_by": holder,
        "reserved_until": _iso(candidate.reserved_until),
    }
    if holder and not active:
        state["expired"] = True
    return state


def _refuse_if_held(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> None:
    if selectors.held_by_other(candidate, user, now):
        until = timezone.localtime(candidate.reserved_until).strftime("%H:%M")
        raise Reserved(
            f"candidate {candidate.pk} is reserved by {candidate.reserved_by} until {until}"
        )


def _validated(decision: str, reason: str, comment: str) -> tuple[Decision, Reason]:
    try:
        chosen = Decision(decision)
    except ValueError:
        raise InvalidDecision(f"unknown decision {decision!r}") from None
    if not reason and chosen == Decision.ACCEPT:
        reason = Reason.GOOD
    if not reason:
        raise InvalidDecision(f"choose a reason (1–9) for {chosen.label.lower()}")
    try:
        why = Reason(reason)
    except ValueError:
        raise InvalidDecision(f"unknown reason {reason!r}") from None
    allowed = ACCEPT_REASONS if chosen == Decision.ACCEPT else PROBLEM_REASONS
    if why not in allowed:
        if chosen == Decision.ACCEPT:
            raise InvalidDecision(
                f"an accept cannot give the reason “{why.label}” (use Good task, or Other)"
            )
        raise InvalidDecision(f"{chosen.label.lower()} needs a problem, not “{why.label}”")
    if why == Reason.OTHER and not comment.strip():
        raise InvalidDecision("the reason Other needs a comment saying what it is")
    return chosen, why


# -- reservations ----------------------------------------------------------------------------------


def _check_workable(candidate: Candidate, user: AbstractBaseUser) -> None:
    """May this user take this candidate to decide it (review, or adjudicate a dispute)?"""
    if candidate.status not in selectors.REVIEWABLE:
        raise NotReviewable(f"candidate {candidate.pk} is {candidate.status}, not up for review")
    if candidate.review_status == ReviewStatus.PENDING:
        if candidate.reviews.filter(reviewer=user.pk, is_adjudication=False).exists():
            raise AlreadyReviewed(f"you already reviewed candidate {candidate.pk}")
        return
    if candidate.review_status == ReviewStatus.DISPUTED:
        _require(user, ADJUDICATE, "adjudicate disputes")
        if candidate.reviews.filter(reviewer=user.pk).exists():
            raise NotReviewable(
                f"you reviewed candidate {candidate.pk}; another reviewer must settle the dispute"
            )
        return
    raise NotReviewable(
        f"candidate {candidate.pk} is already decided ({candidate.get_review_status_display()})"
    )


def _reserve(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> Candidate:
    until = now + timedelta(minutes=selectors.reservation_minutes())
    before = _holding(candidate, now)
    renewal = selectors.held_by(candidate, user, now)
    # The conditional update is the guard against a race between two reviewers: only one of two
    # simultaneous claims on a free candidate matches the filter.
    claimed = (
        Candidate.objects.filter(pk=candidate.pk)
        .filter(selectors.free_q(now) | Q(reserved_by=user.pk))
        .update(reserved_by=user, reserved_until=until)
    )
    if not claimed:
        candidate.refresh_from_db(fields=["reserved_by", "reserved_until"])
        _refuse_if_held(candidate, user, now)
        raise Reserved(f"candidate {candidate.pk} was just reserved by someone else")
    # One reviewer holds one candidate: moving on frees the one left behind for the others.
    for other in Candidate.objects.filter(reserved_by=user.pk, reserved_until__gt=now).exclude(
        pk=candidate.pk
    ):
        _release(other, user, now, why="moved on")
    candidate.reserved_by, candidate.reserved_until = user, until  # type: ignore[assignment]
    if not renewal:  # extending one's own reservation on every page open is not news
        _audit(
            actor=user,
            verb="candidate.reserve",
            target=candidate,
            before=before,
            after={"reserved_by": user.get_username(), "reserved_until": _iso(until)},
        )
    return candidate


def _release(candidate: Candidate, user: AbstractBaseUser, now: datetime, *, why: str) -> None:
    before = _holding(candidate, now)
    Candidate.objects.filter(pk=candidate.pk).update(reserved_by=None, reserved_until=None)
    candidate.reserved_by, candidate.reserved_until = None, None
    after: dict[str, Any] = {"reserved_by": None, "reserved_until": None, "why": why}
    if before["reserved_by"] not in (None, user.get_username()):
        after["override"] = True
    _audit(actor=user, verb="candidate.release", target=candidate, before=before, after=after)


def candidate_reserve(
    *, user: AbstractBaseUser, candidate_id: int, now: datetime | None = None
) -> Candidate:
    """Hold a candidate for RESERVATION_MINUTES so nobody else works it meanwhile."""
    _require(user, REVIEW, "review candidates")
    now = now or timezone.now()
    with transaction.atomic():
        candidate = _locked(candidate_id)
        _check_workable(candidate, user)
        return _reserve(candidate, user, now)


def candidate_reserve_next(
    *,
    user: AbstractBaseUser,
    filters: selectors.QueueFilters | None = None,
    after: int | None = None,
    now: datetime | None = None,
) -> Candidate | None:
    """Reserve the next candidate this user has not reviewed and nobody else holds: after
    `after` in queue order (wrapping round), or, without it, the one they already hold first."""
    _require(user, REVIEW, "review candidates")
    now = now or timezone.now()
    open_ = selectors.workable(user, now, filters)
    tried: set[int] = set()
    with transaction.atomic():
        for _attempt in range(20):  # each miss is a race lost to another reviewer; try the next
            qs = open_.exclude(pk__in=tried)
            if after is None:
                pk = (
                    qs.filter(reserved_by=user.pk, reserved_until__gt=now)
                    .values_list("pk", flat=True)
                    .first()
                    or qs.values_list("pk", flat=True).first()
                )
            else:
                pk = (
                    qs.filter(pk__gt=after).values_list("pk", flat=True).first()
                    or qs.exclude(pk=after).values_list("pk", flat=True).first()
                )
            if pk is None:
                return None
            tried.add(pk)
            try:
                with transaction.atomic():
                    candidate = _locked(pk)
                    _check_workable(candidate, user)  # decided since the query ran, say
                    return _reserve(candidate, user, now)
            except (Reserved, NotReviewable, AlreadyReviewed):
                continue
    return None


def candidate_release(
    *, user: AbstractBaseUser, candidate_id: int, now: datetime | None = None
) -> Candidate:
    """Give a candidate back. The holder may; a reviewer who adjudicates may release someone
    else's (recorded as an override), say when a colleague left one held."""
    _require(user, REVIEW, "review candidates")
    now = now or timezone.now()
    with transaction.atomic():
        candidate = _locked(candidate_id)
        if not (candidate.reserved_until and candidate.reserved_until > now):
            raise NotReserved(f"candidate {candidate.pk} is not reserved")
        if candidate.reserved_by_id != user.pk:
            _require(user, ADJUDICATE, "release another reviewer's reservation")
        _release(candidate, user, now, why="released")
        return candidate


# -- decisions -------------------------------------------------------------------------------------


def _review_row(review: Review) -> dict[str, Any]:
    return {
        "reviewer": review.reviewer.get_username(),
        "decision": review.decision,
        "reason": review.reason,
    }


def review_submit(
    *,
    user: AbstractBaseUser,
    candidate_id: int,
    decision: str,
    reason: str = "",
    comment: str = "",
    now: datetime | None = None,
) -> Review:
    """Record one reviewer's decision. When REVIEWS_PER_CANDIDATE are in, the candidate is
    accepted, rejected or needs a fix if they all agree, and disputed if they do not."""
    _require(user, REVIEW, "review candidates")
    chosen, why = _validated(decision, reason, comment)
    now = now or timezone.now()
    with transaction.atomic():
        candidate = _locked(candidate_id)
        if candidate.status not in selectors.REVIEWABLE:
            raise NotReviewable(f"candidate {candidate.pk} is {candidate.status}, not reviewable")
        if candidate.reviews.filter(reviewer=user.pk, is_adjudication=False).exists():
            raise AlreadyReviewed(f"you already reviewed candidate {candidate.pk}")
        if candidate.review_status != ReviewStatus.PENDING:
            raise NotReviewable(
                f"candidate {candidate.pk} is already decided "
                f"({candidate.get_review_status_display()})"
            )
        _refuse_if_held(candidate, user, now)
        before = {
            "review_status": candidate.review_status,
            "reviews": candidate.reviews.filter(is_adjudication=False).count(),
            **_holding(candidate, now),
        }
        review = Review.objects.create(
            candidate=candidate,
            reviewer=user,
            decision=chosen,
            reason=why,
            comment=comment.strip(),
        )
        decisions = list(
            candidate.reviews.filter(is_adjudication=False).values_list("decision", flat=True)
        )
        status = ReviewStatus.PENDING
        if len(decisions) >= selectors.reviews_needed():
            status = (
                OUTCOME[Decision(decisions[0])]
                if len(set(decisions)) == 1
                else (ReviewStatus.DISPUTED)
            )
        # The decision ends the reviewer's hold, so the next reviewer can take it at once.
        Candidate.objects.filter(pk=candidate.pk).update(
            review_status=status, reserved_by=None, reserved_until=None
        )
        candidate.review_status = status
        _audit(
            actor=user,
            verb="review.submit",
            target=candidate,
            before=before,
            after={
                "review_id": review.pk,
                "decision": chosen.value,
                "reason": why.value,
                "comment": review.comment,
                "reviews": len(decisions),
                "review_status": status.value,
                "reserved_by": None,
                "reserved_until": None,
            },
        )
        return review


def review_adjudicate(
    *,
    user: AbstractBaseUser,
    candidate_id: int,
    decision: str,
    reason: str = "",
    comment: str = "",
    now: datetime | None = None,
) -> Review:
    """Settle a disputed candidate. The adjudication wins over the reviews and is audited as an
    override of them; it must come from someone who was not one of the disputing reviewers."""
    _require(user, ADJUDICATE, "adjudicate disputes")
    chosen, why = _validated(decision, reason, comment)
    now = now or timezone.now()
    with transaction.atomic():
        candidate = _locked(candidate_id)
        if candidate.review_status != ReviewStatus.DISPUTED:
            raise NotReviewable(
                f"candidate {candidate.pk} is not disputed "
                f"({candidate.get_review_status_display()})"
            )
        reviews = list(candidate.reviews.select_related("reviewer").filter(is_adjudication=False))
        if any(r.reviewer_id == user.pk for r in reviews):
            raise NotReviewable(
                f"you reviewed candidate {candidate.pk}; another reviewer must settle the dispute"
            )
        _refuse_if_held(candidate, user, now)
        before = {
            "review_status": candidate.review_status,
            "decisions": [_review_row(r) for r in reviews],
            **_holding(candidate, now),
        }
        review = Review.objects.create(
            candidate=candidate,
            reviewer=user,
            decision=chosen,
            reason=why,
            comment=comment.strip(),
            is_adjudication=True,
        )
        status = OUTCOME[chosen]
        Candidate.objects.filter(pk=candidate.pk).update(
            review_status=status, reserved_by=None, reserved_until=None
        )
        candidate.review_status = status
        _audit(
            actor=user,
            verb="review.override",
            target=candidate,
            before=before,
            after={
                "review_id": review.pk,
                "decision": chosen.value,
                "reason": why.value,
                "comment": review.comment,
                "review_status": status.value,
                "override": True,
                "overridden": [r.reviewer.get_username() for r in reviews if r.decision != chosen],
            },
        )
        return review


# -- dataset export --------------------------------------------------------------------------------


def _default_destination(now: datetime) -> Path:
    return Path(settings.VAR_DIR) / "exports" / now.strftime("%Y%m%d-%H%M%S")


def dataset_export_create(
    *,
    user: AbstractBaseUser,
    destination: str | Path | None = None,
    enqueue: bool = True,
    now: datetime | None = None,
) -> DatasetExport:
    """Queue an export of the accepted tasks; a worker runs dataset_export_execute."""
    _require(user, EXPORT, "export datasets")
    now = now or timezone.now()
    with transaction.atomic():
        path = Path(destination) if destination else _default_destination(now)
        taken = DatasetExport.objects.filter(path=str(path)).exists()
        if destination is None and (taken or path.exists()):
            path = path.with_name(f"{path.name}-{uuid.uuid4().hex[:6]}")
        elif taken or (path.exists() and any(path.iterdir())):
            raise ExportRefused(f"{path} is already used; choose an empty or new folder")
        export = DatasetExport.objects.create(path=str(path), created_by=user)
        _audit(
            actor=user,
            verb="dataset_export.create",
            target=export,
            before=None,
            after={"status": export.status, "path": export.path},
        )
        if enqueue:
            from django_q.tasks import async_task

            # After commit: a worker that starts first must find the row.
            transaction.on_commit(
                partial(
                    async_task,
                    "tasks_review.services.review.dataset_export_execute",
                    export_id=export.pk,
                    task_name=f"dataset-export-{export.pk}",
                )
            )
        return export


def dataset_export_execute(*, export_id: int) -> DatasetExport | None:
    """Write the dataset folder for a queued export. A worker takes only the id; a row already
    claimed, finished or deleted is left alone."""
    claimed = DatasetExport.objects.filter(pk=export_id, status=DatasetExport.Status.QUEUED).update(
        status=DatasetExport.Status.RUNNING
    )
    if not claimed:
        return DatasetExport.objects.filter(pk=export_id).first()
    export = DatasetExport.objects.select_related("created_by").get(pk=export_id)
    tasks = [_export_task(c) for c in selectors.exportable()]
    try:
        manifest = write_dataset(
            Path(export.path),
            tasks,
            header={
                "export_id": export.pk,
                "created_by": export.created_by.get_username() if export.created_by else None,
                "created_at": _iso(export.created_at),
            },
        )
    except (ExportRefused, OSError) as exc:
        export.status, export.error = DatasetExport.Status.FAILED, str(exc)
    else:
        export.status, export.manifest = DatasetExport.Status.DONE, manifest
        export.task_count = len(tasks)
    export.finished_at = timezone.now()
    with transaction.atomic():
        export.save(update_fields=["status", "error", "manifest", "task_count", "finished_at"])
        _audit(
            actor=export.created_by,
            verb="dataset_export.finish",
            target=export,
            before={"status": DatasetExport.Status.RUNNING},
            after={
                "status": export.status,
                "path": export.path,
                "tasks": export.task_count,
                "error": export.error,
            },
        )
    return export


@dataclass(frozen=True)
class ExportTask:
    candidate_id: int
    task_dir: Path
    entry: dict[str, Any]  # the task's manifest entry, without its folder name


def _export_task(candidate: Candidate) -> ExportTask:
    reviews = [
        {
            "reviewer": r.reviewer.get_username(),
            "decision": r.decision,
            "reason": r.reason,
            "comment": r.comment,
            "is_adjudication": r.is_adjudication,
            "created_at": _iso(r.created_at),
        }
        for r in candidate.reviews.select_related("reviewer").order_by("id")
    ]
    trials = list(candidate.trials.defer("logs", "detail").order_by("role", "repeat", "id"))
    by_role: dict[str, dict[str, Any]] = {}
    for t in trials:
        role = by_role.setdefault(t.role, {"expected": t.expected, "rewards": [], "statuses": []})
        role["rewards"].append(t.reward)
        role["statuses"].append(t.status)
    return ExportTask(
        candidate_id=candidate.pk,
        task_dir=Path(candidate.task_dir),
        entry={
            "candidate_id": candidate.pk,
            "task_name": candidate.task_name,
            "family": candidate.family,
            "language": candidate.language,
            "check_command": candidate.check_command,
            "pipeline_run_id": candidate.run_id,
            "trajectory_id": candidate.trajectory_id,
            "source_trajectory_sha256": candidate.trajectory.source.sha256,
            "reviews": reviews,
            "trials": {**selectors.trial_summary(trials).as_dict(), "by_role": by_role},
        },
    )


# The folder copy below is plain Python on paths: no Django, so it can move into the framework-free
# core unchanged.


def copy_task_folder(source: Path, target: Path) -> int:
    """Copy a task folder keeping file modes. A symlink or special file anywhere refuses the
    copy: a task folder is a trust boundary, and a link could pull in anything on this host."""
    if source.is_symlink() or not source.is_dir():
        raise ExportRefused(f"{source} is not a task folder (missing, a file, or a symlink)")
    copied = 0
    dirs: list[tuple[Path, Path]] = [(source, target)]
    target.mkdir()
    for root, dirnames, filenames in os.walk(source, followlinks=False):
        here = Path(root)
        there = target / here.relative_to(source)
        for name in sorted(dirnames):
            if (here / name).is_symlink():
                raise ExportRefused(f"symlink in task folder: {here / name}")
            (there / name).mkdir()
            dirs.append((here / name, there / name))
        for name in sorted(filenames):
            mode = os.lstat(here / name).st_mode
            if stat.S_ISLNK(mode):
                raise ExportRefused(f"symlink in task folder: {here / name}")
            if not stat.S_ISREG(mode):
                raise ExportRefused(f"not a regular file in task folder: {here / name}")
            shutil.copy2(here / name, there / name, follow_symlinks=False)
            copied += 1
    # Directory modes last: a read-only directory copied first would refuse its own files.
    for src, dst in reversed(dirs):
        shutil.copystat(src, dst, follow_symlinks=False)
    return copied


def _folder_name(task: ExportTask, used: set[str]) -> str:
    name = task.task_dir.name or f"candidate-{task.candidate_id}"
    if name in used:
        name = f"{name}-c{task.candidate_id}"
    used.add(name)
    return name


def write_dataset(
    destination: Path, tasks: Sequence[ExportTask], *, header: dict[str, Any]
) -> dict[str, Any]:
    """A Harbor dataset folder: one folder per task, plus manifest.json. Built beside the
    destination and renamed into place, so a failed export leaves nothing half-written."""
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise ExportRefused(f"{destination} exists and is not an empty folder")
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = destination.parent / f".{destination.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        used: set[str] = set()
        entries = []
        for task in tasks:
            name = _folder_name(task, used)
            files = copy_task_folder(task.task_dir, staging / name)
            entries.append({"name": name, "path": name, "files": files, **task.entry})
        manifest = {"format": "harbor-dataset", **header, "task_count": len(entries)}
        manifest["tasks"] = entries
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if destination.exists():
            destination.rmdir()
        staging.rename(destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest
