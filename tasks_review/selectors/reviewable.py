"""What is up for review, how many reviews decide a candidate, and who holds one."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Q, QuerySet

from ..models import Candidate, Review
from ..roles import REVIEW

# Only candidates the pipeline wrote or kept (verified) are worth a human's time.
REVIEWABLE = (Candidate.Status.KEPT, Candidate.Status.WRITTEN)


def reviews_needed() -> int:
    return int(settings.TRAJ2ENV["REVIEWS_PER_CANDIDATE"])


def reservation_minutes() -> int:
    return int(settings.TRAJ2ENV["RESERVATION_MINUTES"])


def reviewable() -> QuerySet[Candidate]:
    # Sandbox tasks were authored, not mined: their author stands where a reviewer would.
    return Candidate.objects.filter(status__in=REVIEWABLE).exclude(family=Candidate.SANDBOX)


def is_reviewable(candidate: Candidate) -> bool:
    """The row-level form of `reviewable()`, for a service holding the candidate."""
    return candidate.status in REVIEWABLE and candidate.family != Candidate.SANDBOX


def complete(candidate: Candidate) -> bool:
    """All the reviews a candidate needs are in: it is decided or disputed, no longer pending."""
    return candidate.review_status != Candidate.ReviewStatus.PENDING


def bound_by_blind_review(user: AbstractBaseUser) -> bool:
    """Blind review: until a candidate's reviews are complete, nothing shows anyone who may review
    another reviewer's decision on it, not even after giving their own. Someone who cannot
    review (an approver) is not bound; an admin reviews too, so is."""
    return user.has_perm(REVIEW)


def reviewed_by(user: AbstractBaseUser) -> Exists:
    """The candidate has an independent review by this user (an adjudication is not one)."""
    return Exists(
        Review.objects.filter(candidate=OuterRef("pk"), reviewer=user.pk, is_adjudication=False)
    )


class Held(Protocol):
    """A row someone can hold: a candidate here, a preference pair on the training floor."""

    reserved_by_id: int | None
    reserved_until: datetime | None


def free_q(now: datetime) -> Q:
    """Nobody holds the row: never reserved, released, or the reservation ran out."""
    return Q(reserved_until__isnull=True) | Q(reserved_until__lte=now)


def held_by_other(row: Held, user: AbstractBaseUser, now: datetime) -> bool:
    return (
        row.reserved_by_id is not None
        and row.reserved_by_id != user.pk
        and row.reserved_until is not None
        and row.reserved_until > now
    )


def held_by(row: Held, user: AbstractBaseUser, now: datetime) -> bool:
    return (
        row.reserved_by_id == user.pk
        and row.reserved_until is not None
        and row.reserved_until > now
    )
