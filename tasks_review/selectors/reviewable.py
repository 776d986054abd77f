"""What is up for review, how many reviews decide a candidate, and who holds one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from ..models import Candidate, DeskSetting, Review
from ..roles import REVIEW
from . import desk_settings

# Only candidates the pipeline wrote or kept (verified) are worth a human's time.
REVIEWABLE = (Candidate.Status.KEPT, Candidate.Status.WRITTEN)


def reviews_needed() -> int:
    """Set by an admin in the app (desk settings), else TRAJ2ENV_REVIEWS_PER_CANDIDATE."""
    return desk_settings.value(DeskSetting.Key.REVIEWS_PER_CANDIDATE)


def hold_seconds() -> int:
    """How long opening an item holds it; its page renews the hold while in use."""
    return int(settings.TRAJ2ENV["HOLD_SECONDS"])


def hold_length() -> str:
    """The hold's length in words: "2 min", "45 s"."""
    minutes, seconds = divmod(hold_seconds(), 60)
    if not minutes:
        return f"{seconds} s"
    return f"{minutes} min" + (f" {seconds} s" if seconds else "")


def hold_beat_seconds() -> int:
    """How often an open page renews its hold: four beats per hold, so one late beat (a
    throttled timer, a slow request) does not lose it."""
    return max(5, hold_seconds() // 4)


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


def held_q(user: AbstractBaseUser, now: datetime) -> Q:
    """Someone other than this user holds the row right now."""
    return Q(reserved_until__gt=now) & ~Q(reserved_by=user.pk)


# How many holds a "nothing is free" note names before it counts the rest.
NAMED_HOLDS = 5


def held_note(held: QuerySet[Any], noun: str) -> str:
    """What "next" says when nothing is free but ``held`` rows (held by others, soonest free
    first) are: who holds which until when, so a person knows whom to ask or when to come back.
    """
    return holds_named(list(held[:NAMED_HOLDS]), held.count(), noun)


def holds_named(rows: Sequence[Any], count: int, noun: str) -> str:
    """
    >>> from types import SimpleNamespace as Row
    >>> from datetime import UTC
    >>> bob = Row(get_username=lambda: "bob")
    >>> until = datetime(2026, 1, 2, 9, 5, 30, 123, UTC)
    >>> holds_named([Row(pk=4, reserved_by=bob, reserved_until=until)], 1, "candidate")
    '1 candidate is held by others: #4 by bob until 09:05:30.'
    """
    if not count:
        return ""
    named = [
        f"#{row.pk} by {row.reserved_by.get_username()} until {clock(row.reserved_until)}"
        for row in rows[:NAMED_HOLDS]
    ]
    more = f" and {count - NAMED_HOLDS} more" if count > NAMED_HOLDS else ""
    many = f"1 {noun} is" if count == 1 else f"{count} {noun}s are"
    return f"{many} held by others: {', '.join(named)}{more}."


def clock(moment: datetime) -> str:
    """A moment of today as people read it: local time to the second, no microseconds."""
    return timezone.localtime(moment).strftime("%H:%M:%S")
