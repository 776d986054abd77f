"""Holds: a person keeps a row for a while so nobody else works it meanwhile.

Any model with ``reserved_by`` (a user) and ``reserved_until`` can be held: the review desk's
candidates (``reservations``) and the training floor's preference pairs. Callers check the role
and whether the row is theirs to work; these functions take the hold with a conditional update,
free the one a person leaves behind, and audit both (``<row type>.reserve`` / ``.release``) in
the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Model, Q, QuerySet
from django.utils import timezone

from groundwork.access.errors import Held, Refused
from groundwork.selectors.holds import free_q, held_by, held_by_other
from groundwork.services.audit import audit_event_record, audit_type, iso

# Why a hold ended when its page gave it back as the tab closed or navigated away.
LEFT = "left the page"

# How many rows reserve_next tries before giving up: each miss is a race lost to another person.
ATTEMPTS = 20


def _name(row: Model) -> str:
    return str(row._meta.verbose_name)


def holding(row: Any, now: datetime) -> dict[str, Any]:
    """Who holds the row, as the audit log records it."""
    active = row.reserved_until is not None and row.reserved_until > now
    holder = row.reserved_by.get_username() if row.reserved_by else None
    state: dict[str, Any] = {
        "reserved_by": holder,
        "reserved_until": iso(row.reserved_until),
    }
    if holder and not active:
        state["expired"] = True
    return state


def refuse_if_held(row: Any, user: AbstractBaseUser, now: datetime) -> None:
    if held_by_other(row, user, now):
        until = timezone.localtime(row.reserved_until).strftime("%H:%M")
        raise Held(f"{_name(row)} {row.pk} is reserved by {row.reserved_by} until {until}")


def reserve[Row: Model](row: Row, user: AbstractBaseUser, now: datetime, *, seconds: int) -> Row:
    """Hold ``row`` for ``seconds``, or renew one's own hold; refused with ``Held`` when
    someone else holds it. Holding one row of a kind frees the others this person held."""
    model = type(row)
    held: Any = row
    until = now + timedelta(seconds=seconds)
    before = holding(held, now)
    renewal = held_by(held, user, now)
    # The conditional update is the guard against a race between two people: only one of two
    # simultaneous claims on a free row matches the filter.
    claimed = (
        model._default_manager.filter(pk=row.pk)
        .filter(free_q(now) | Q(reserved_by=user.pk))
        .update(reserved_by=user, reserved_until=until)
    )
    if not claimed:
        row.refresh_from_db(fields=["reserved_by", "reserved_until"])
        refuse_if_held(row, user, now)
        raise Held(f"{_name(row)} {row.pk} was just reserved by someone else")
    # One person holds one row at a time: moving on frees the one left behind for the others.
    for other in model._default_manager.filter(reserved_by=user.pk, reserved_until__gt=now).exclude(
        pk=row.pk
    ):
        release(other, user, now, why="moved on")
    held.reserved_by, held.reserved_until = user, until
    if not renewal:  # the page's heartbeat renewing one's own hold is not news
        audit_event_record(
            actor=user,
            verb=f"{audit_type(row)}.reserve",
            target=row,
            before=before,
            after={"reserved_by": user.get_username(), "reserved_until": iso(until)},
        )
    return row


def release(row: Model, user: AbstractBaseUser, now: datetime, *, why: str) -> None:
    """Free the row, recording why; freeing someone else's hold is marked as an override."""
    held: Any = row
    before = holding(held, now)
    type(row)._default_manager.filter(pk=row.pk).update(reserved_by=None, reserved_until=None)
    held.reserved_by, held.reserved_until = None, None
    after: dict[str, Any] = {"reserved_by": None, "reserved_until": None, "why": why}
    if before["reserved_by"] not in (None, user.get_username()):
        after["override"] = True
    audit_event_record(
        actor=user, verb=f"{audit_type(row)}.release", target=row, before=before, after=after
    )


def reserve_next[Row: Model](
    *,
    open_: QuerySet[Row],
    user: AbstractBaseUser,
    now: datetime,
    after: int | None,
    take: Callable[[int], Row],
    skip: tuple[type[Exception], ...] = (Refused,),
) -> Row | None:
    """Hold the next row of ``open_`` (in its order): after ``after``, wrapping round, or without
    it the one this person already holds first. ``take(pk)`` locks, checks and reserves one row;
    a row it refuses with one of ``skip`` (held meanwhile, decided since the query ran) is passed
    over for the next."""
    tried: set[int] = set()
    with transaction.atomic():
        for _attempt in range(ATTEMPTS):
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
                    return take(pk)
            except skip:
                continue
    return None
