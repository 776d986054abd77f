"""Reservations: a reviewer holds a candidate for a while so nobody else works it meanwhile.

The hold itself (the conditional update, one hold per person, its audit) is in ``holds``, shared
with the training floor's preference pairs; this module says who may hold which candidate.

Every function checks the caller's role itself, refuses illegal transitions with a refusal
(``groundwork.access.errors``), and writes its AuditEvent in the same transaction as the change it
records. The decisions in
`reviews` take their locks and their refusals from here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from groundwork.access.errors import Conflict, NotHeld, NotPermitted, require
from groundwork.selectors.holds import hold_seconds
from groundwork.services import holds

from ..models import Candidate
from ..roles import ADJUDICATE, REVIEW
from ..selectors import disputes, queue, reviewable
from ..selectors.disputes import Unsettled

ReviewStatus = Candidate.ReviewStatus


def candidate_locked(candidate_id: int) -> Candidate:
    try:
        # select_for_update serialises concurrent decisions on PostgreSQL; SQLite's IMMEDIATE
        # transactions (settings) already take the write lock when the block opens. Only the
        # candidate's row: PostgreSQL refuses FOR UPDATE on the outer join to a nullable holder.
        return (
            Candidate.objects.select_for_update(of=("self",))
            .select_related("reserved_by")
            .get(pk=candidate_id)
        )
    except Candidate.DoesNotExist:
        raise Conflict(f"candidate {candidate_id} does not exist") from None


def holding(candidate: Candidate, now: datetime) -> dict[str, Any]:
    """Who holds the candidate, as the audit log records it."""
    return holds.holding(candidate, now)


def refuse_if_held(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> None:
    holds.refuse_if_held(candidate, user, now)


def refuse_unless_settler(candidate: Candidate, user: AbstractBaseUser) -> None:
    """The dispute rule (`selectors.disputes.settle_refusal`) as the error a view answers."""
    refusal = disputes.settle_refusal(candidate, user)
    if refusal is Unsettled.NOT_ADJUDICATOR:
        raise NotPermitted(f"{user.get_username() or 'anonymous'} may not adjudicate disputes")
    if refusal is Unsettled.NOT_DISPUTED:
        raise Conflict(
            f"candidate {candidate.pk} is not disputed ({candidate.get_review_status_display()})"
        )
    if refusal is Unsettled.DISPUTANT:
        raise Conflict(
            f"you reviewed candidate {candidate.pk}; another reviewer must settle the dispute"
        )


def _check_workable(candidate: Candidate, user: AbstractBaseUser) -> None:
    """May this user take this candidate to decide it (review, or adjudicate a dispute)?"""
    if not reviewable.is_reviewable(candidate):
        raise Conflict(f"candidate {candidate.pk} is {candidate.status}, not up for review")
    if candidate.review_status == ReviewStatus.PENDING:
        if candidate.reviews.filter(reviewer=user.pk, is_adjudication=False).exists():
            raise Conflict(f"you already reviewed candidate {candidate.pk}")
        return
    if candidate.review_status == ReviewStatus.DISPUTED:
        refuse_unless_settler(candidate, user)
        return
    raise Conflict(
        f"candidate {candidate.pk} is already decided ({candidate.get_review_status_display()})"
    )


def _reserve(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> Candidate:
    return holds.reserve(candidate, user, now, seconds=hold_seconds())


def _release(candidate: Candidate, user: AbstractBaseUser, now: datetime, *, why: str) -> None:
    holds.release(candidate, user, now, why=why)


def candidate_reserve(
    *, user: AbstractBaseUser, candidate_id: int, now: datetime | None = None
) -> Candidate:
    """Hold a candidate for HOLD_SECONDS (or renew one's hold) so nobody else works it
    meanwhile; the desk renews it while open and gives it back when left."""
    require(user, REVIEW, "review candidates")
    now = now or timezone.now()
    with transaction.atomic():
        candidate = candidate_locked(candidate_id)
        _check_workable(candidate, user)
        return _reserve(candidate, user, now)


def candidate_reserve_next(
    *,
    user: AbstractBaseUser,
    filters: queue.QueueFilters | None = None,
    after: int | None = None,
    now: datetime | None = None,
) -> Candidate | None:
    """Reserve the next candidate this user has not reviewed and nobody else holds: after
    `after` in queue order (wrapping round), or, without it, the one they already hold first."""
    require(user, REVIEW, "review candidates")
    now = now or timezone.now()

    def take(pk: int) -> Candidate:
        candidate = candidate_locked(pk)
        _check_workable(candidate, user)  # decided since the query ran, say
        return _reserve(candidate, user, now)

    return holds.reserve_next(
        open_=queue.workable(user, now, filters),
        user=user,
        now=now,
        after=after,
        take=take,
        skip=(Conflict,),
    )


def candidate_release(
    *, user: AbstractBaseUser, candidate_id: int, left: bool = False, now: datetime | None = None
) -> Candidate:
    """Give a candidate back. The holder may; a reviewer who adjudicates may release someone
    else's (recorded as an override), say when a colleague left one held. ``left``: the desk
    gave it back as its tab closed or navigated away."""
    require(user, REVIEW, "review candidates")
    now = now or timezone.now()
    with transaction.atomic():
        candidate = candidate_locked(candidate_id)
        if not (candidate.reserved_until and candidate.reserved_until > now):
            raise NotHeld(f"candidate {candidate.pk} is not reserved")
        if candidate.reserved_by_id != user.pk:
            require(user, ADJUDICATE, "release another reviewer's reservation")
        _release(candidate, user, now, why=holds.LEFT if left else "released")
        return candidate
