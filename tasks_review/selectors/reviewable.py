"""What is up for review, how many reviews decide a candidate, and who holds one."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Q, QuerySet

from ..models import Candidate, Review

# Only candidates the pipeline wrote or kept (verified) are worth a human's time.
REVIEWABLE = (Candidate.Status.KEPT, Candidate.Status.WRITTEN)


def reviews_needed() -> int:
    return int(settings.TRAJ2ENV["REVIEWS_PER_CANDIDATE"])


def reservation_minutes() -> int:
    return int(settings.TRAJ2ENV["RESERVATION_MINUTES"])


def reviewable() -> QuerySet[Candidate]:
    return Candidate.objects.filter(status__in=REVIEWABLE)


def reviewed_by(user: AbstractBaseUser) -> Exists:
    """The candidate has an independent review by this user (an adjudication is not one)."""
    return Exists(
        Review.objects.filter(candidate=OuterRef("pk"), reviewer=user.pk, is_adjudication=False)
    )


def free_q(now: datetime) -> Q:
    """Nobody holds the candidate: never reserved, released, or the reservation ran out."""
    return Q(reserved_until__isnull=True) | Q(reserved_until__lte=now)


def held_by_other(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> bool:
    return (
        candidate.reserved_by_id is not None
        and candidate.reserved_by_id != user.pk
        and candidate.reserved_until is not None
        and candidate.reserved_until > now
    )


def held_by(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> bool:
    return (
        candidate.reserved_by_id == user.pk
        and candidate.reserved_until is not None
        and candidate.reserved_until > now
    )
