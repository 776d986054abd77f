"""What is up for review, and how many reviews decide a candidate (who holds one: holds)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, QuerySet

from ..models import Candidate, DeskSetting, Review
from ..roles import REVIEW
from . import desk_settings

# Only candidates the pipeline wrote or kept (verified) are worth a human's time.
REVIEWABLE = (Candidate.Status.KEPT, Candidate.Status.WRITTEN)


def reviews_needed() -> int:
    """Set by an admin in the app (desk settings), else TRAJ2ENV_REVIEWS_PER_CANDIDATE."""
    return desk_settings.value(DeskSetting.Key.REVIEWS_PER_CANDIDATE)


def reviewable() -> QuerySet[Candidate]:
    # Authored tasks were written, not mined: their author stands where a reviewer would.
    return Candidate.objects.filter(Candidate.MINED, status__in=REVIEWABLE)


def is_reviewable(candidate: Candidate) -> bool:
    """The row-level form of `reviewable()`, for a service holding the candidate."""
    return candidate.status in REVIEWABLE and candidate.mined


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
