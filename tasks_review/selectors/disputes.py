"""Disputed candidates, and the one rule for who may settle a dispute."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from groundwork.selectors.holds import free_q
from tasks_review.selectors.reviewable import reviewable

from ..models import Candidate
from ..roles import ADJUDICATE


class Unsettled(StrEnum):
    """Why a user may not settle a candidate's dispute."""

    NOT_ADJUDICATOR = "not_adjudicator"  # their role does not adjudicate
    NOT_DISPUTED = "not_disputed"
    DISPUTANT = "disputant"  # they reviewed it: a dispute is settled by someone else


def settle_refusal(candidate: Candidate, user: AbstractBaseUser) -> Unsettled | None:
    """Who may settle a dispute: someone whose role adjudicates and who did not review the
    candidate. None when this user may settle it. The services enforce this, the candidate page
    offers the settle form by it and the next dispute is chosen by it: change it here only."""
    if not user.is_authenticated or not user.has_perm(ADJUDICATE):
        return Unsettled.NOT_ADJUDICATOR
    if candidate.review_status != Candidate.ReviewStatus.DISPUTED:
        return Unsettled.NOT_DISPUTED
    # .all(): the prefetched reviews when the caller loaded them, else a fresh read.
    if any(r.reviewer_id == user.pk for r in candidate.reviews.all()):
        return Unsettled.DISPUTANT
    return None


def disputes() -> QuerySet[Candidate]:
    return (
        reviewable()
        .filter(review_status=Candidate.ReviewStatus.DISPUTED)
        .select_related("held_by")
        .defer("instruction", "start_files", "reference_files", "changed", "payload")
        .prefetch_related("reviews__reviewer")
        .order_by("id")
    )


def next_dispute(after: int, user: AbstractBaseUser, now: datetime) -> int | None:
    """The next dispute after `after` (wrapping round) that this user may settle and nobody else
    holds."""
    # Disputes are few (two humans had to disagree), so the rule runs over them in Python.
    open_ = [
        c.pk
        for c in disputes().filter(free_q(now) | Q(held_by=user.pk))
        if settle_refusal(c, user) is None
    ]
    return next((pk for pk in open_ if pk > after), open_[0] if open_ else None)
