"""Who holds a row, and for how long: the reads of holds (``groundwork.services.holds``).

A person holds a row for ``hold_seconds`` so nobody else works it meanwhile; the page renews the
hold every ``hold_beat_seconds`` while it is open. Any model with ``held_by`` (a user) and
``held_until`` can be held.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils import timezone

from groundwork.models import Holdable


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


def free_q(now: datetime) -> Q:
    """Nobody holds the row: never held, given back, or the hold ran out."""
    return Q(held_until__isnull=True) | Q(held_until__lte=now)


def is_held_by_other(row: Holdable, user: AbstractBaseUser, now: datetime) -> bool:
    return (
        row.held_by_id is not None
        and row.held_by_id != user.pk
        and row.held_until is not None
        and row.held_until > now
    )


def is_held_by(row: Holdable, user: AbstractBaseUser, now: datetime) -> bool:
    return row.held_by_id == user.pk and row.held_until is not None and row.held_until > now


def held_q(user: AbstractBaseUser, now: datetime) -> Q:
    """Someone other than this user holds the row right now."""
    return Q(held_until__gt=now) & ~Q(held_by=user.pk)


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
    >>> holds_named([Row(pk=4, held_by=bob, held_until=until)], 1, "candidate")
    '1 candidate is held by others: #4 by bob until 09:05:30.'
    """
    if not count:
        return ""
    named = [
        f"#{row.pk} by {row.held_by.get_username()} until {clock(row.held_until)}"
        for row in rows[:NAMED_HOLDS]
    ]
    more = f" and {count - NAMED_HOLDS} more" if count > NAMED_HOLDS else ""
    many = f"1 {noun} is" if count == 1 else f"{count} {noun}s are"
    return f"{many} held by others: {', '.join(named)}{more}."


def clock(moment: datetime) -> str:
    """A moment of today as people read it: local time to the second, no microseconds."""
    return timezone.localtime(moment).strftime("%H:%M:%S")
