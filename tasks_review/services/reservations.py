"""Reservations: a reviewer holds a candidate for a while so nobody else works it meanwhile.

Every function checks the caller's role itself, refuses illegal transitions with a ReviewError,
and writes its AuditEvent in the same transaction as the change it records. The decisions in
`reviews` take their locks and their refusals from here.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..models import Candidate
from ..roles import ADJUDICATE, REVIEW
from ..selectors import disputes, queue, reviewable
from ..selectors.disputes import Unsettled
from .audit import audit_event_record, iso
from .errors import (
    AlreadyReviewed,
    NotPermitted,
    NotReserved,
    NotReviewable,
    Reserved,
    require,
)

ReviewStatus = Candidate.ReviewStatus


def candidate_locked(candidate_id: int) -> Candidate:
    try:
        # select_for_update serialises concurrent decisions on PostgreSQL; SQLite's IMMEDIATE
        # transactions (settings) already take the write lock when the block opens.
        return (
            Candidate.objects.select_for_update().select_related("reserved_by").get(pk=candidate_id)
        )
    except Candidate.DoesNotExist:
        raise NotReviewable(f"candidate {candidate_id} does not exist") from None


def holding(candidate: Candidate, now: datetime) -> dict[str, Any]:
    """Who holds the candidate, as the audit log records it."""
    active = candidate.reserved_until is not None and candidate.reserved_until > now
    holder = candidate.reserved_by.get_username() if candidate.reserved_by else None
    state: dict[str, Any] = {
        "reserved_by": holder,
        "reserved_until": iso(candidate.reserved_until),
    }
    if holder and not active:
        state["expired"] = True
    return state


def refuse_if_held(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> None:
    if reviewable.held_by_other(candidate, user, now):
        until = timezone.localtime(candidate.reserved_until).strftime("%H:%M")
        raise Reserved(
            f"candidate {candidate.pk} is reserved by {candidate.reserved_by} until {until}"
        )


def refuse_unless_settler(candidate: Candidate, user: AbstractBaseUser) -> None:
    """The dispute rule (`selectors.disputes.settle_refusal`) as the error a view answers."""
    refusal = disputes.settle_refusal(candidate, user)
    if refusal is Unsettled.NOT_ADJUDICATOR:
        raise NotPermitted(f"{user.get_username() or 'anonymous'} may not adjudicate disputes")
    if refusal is Unsettled.NOT_DISPUTED:
        raise NotReviewable(
            f"candidate {candidate.pk} is not disputed ({candidate.get_review_status_display()})"
        )
    if refusal is Unsettled.DISPUTANT:
        raise NotReviewable(
            f"you reviewed candidate {candidate.pk}; another reviewer must settle the dispute"
        )


def _check_workable(candidate: Candidate, user: AbstractBaseUser) -> None:
    """May this user take this candidate to decide it (review, or adjudicate a dispute)?"""
    if candidate.status not in reviewable.REVIEWABLE:
        raise NotReviewable(f"candidate {candidate.pk} is {candidate.status}, not up for review")
    if candidate.review_status == ReviewStatus.PENDING:
        if candidate.reviews.filter(reviewer=user.pk, is_adjudication=False).exists():
            raise AlreadyReviewed(f"you already reviewed candidate {candidate.pk}")
        return
    if candidate.review_status == ReviewStatus.DISPUTED:
        refuse_unless_settler(candidate, user)
        return
    raise NotReviewable(
        f"candidate {candidate.pk} is already decided ({candidate.get_review_status_display()})"
    )


def _reserve(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> Candidate:
    until = now + timedelta(minutes=reviewable.reservation_minutes())
    before = holding(candidate, now)
    renewal = reviewable.held_by(candidate, user, now)
    # The conditional update is the guard against a race between two reviewers: only one of two
    # simultaneous claims on a free candidate matches the filter.
    claimed = (
        Candidate.objects.filter(pk=candidate.pk)
        .filter(reviewable.free_q(now) | Q(reserved_by=user.pk))
        .update(reserved_by=user, reserved_until=until)
    )
    if not claimed:
        candidate.refresh_from_db(fields=["reserved_by", "reserved_until"])
        refuse_if_held(candidate, user, now)
        raise Reserved(f"candidate {candidate.pk} was just reserved by someone else")
    # One reviewer holds one candidate: moving on frees the one left behind for the others.
    for other in Candidate.objects.filter(reserved_by=user.pk, reserved_until__gt=now).exclude(
        pk=candidate.pk
    ):
        _release(other, user, now, why="moved on")
    candidate.reserved_by, candidate.reserved_until = user, until  # type: ignore[assignment]
    if not renewal:  # extending one's own reservation on every page open is not news
        audit_event_record(
            actor=user,
            verb="candidate.reserve",
            target=candidate,
            before=before,
            after={"reserved_by": user.get_username(), "reserved_until": iso(until)},
        )
    return candidate


def _release(candidate: Candidate, user: AbstractBaseUser, now: datetime, *, why: str) -> None:
    before = holding(candidate, now)
    Candidate.objects.filter(pk=candidate.pk).update(reserved_by=None, reserved_until=None)
    candidate.reserved_by, candidate.reserved_until = None, None
    after: dict[str, Any] = {"reserved_by": None, "reserved_until": None, "why": why}
    if before["reserved_by"] not in (None, user.get_username()):
        after["override"] = True
    audit_event_record(
        actor=user, verb="candidate.release", target=candidate, before=before, after=after
    )


def candidate_reserve(
    *, user: AbstractBaseUser, candidate_id: int, now: datetime | None = None
) -> Candidate:
    """Hold a candidate for RESERVATION_MINUTES so nobody else works it meanwhile."""
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
    open_ = queue.workable(user, now, filters)
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
                    candidate = candidate_locked(pk)
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
    require(user, REVIEW, "review candidates")
    now = now or timezone.now()
    with transaction.atomic():
        candidate = candidate_locked(candidate_id)
        if not (candidate.reserved_until and candidate.reserved_until > now):
            raise NotReserved(f"candidate {candidate.pk} is not reserved")
        if candidate.reserved_by_id != user.pk:
            require(user, ADJUDICATE, "release another reviewer's reservation")
        _release(candidate, user, now, why="released")
        return candidate
