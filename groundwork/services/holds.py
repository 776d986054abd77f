"""Holds: a person keeps a row for a while so nobody else works it meanwhile.

    CANDIDATES = HoldPolicy(
        perm=REVIEW, action="review candidates",
        override_perm=ADJUDICATE, override_action="release another reviewer's hold",
        locked=candidate_locked, check_workable=check_workable, open_rows=queue.workable,
    )
    hold(CANDIDATES, user=alice, row_id=42)                # held for HOLD_SECONDS, or renewed
    hold_next(CANDIDATES, user=alice, scope=filters, after=42)  # the next one in the queue
    release(CANDIDATES, user=alice, row_id=42, left=True)  # its page closed

Any model with ``held_by`` (a user) and ``held_until`` can be held: the review desk's
candidates and the training floor's preference pairs. A ``HoldPolicy`` says, for one kind of row,
who may hold one and give back someone else's, how a row is locked and which rows a person may
work; these functions check the role, take the hold with a conditional update, free the one a
person leaves behind, and audit both (``<row type>.hold`` / ``.release``, the words the audit
log has always used) in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Model, Q, QuerySet
from django.utils import timezone

from groundwork.access.errors import Conflict, Held, NotHeld, require
from groundwork.selectors.holds import free_q, hold_seconds, is_held_by, is_held_by_other
from groundwork.services.audit import audit_event_record, audit_type, iso

# Why a hold ended when its page gave it back as the tab closed or navigated away.
LEFT = "left the page"

# How many rows hold_next tries before giving up: each miss is a race lost to another person.
ATTEMPTS = 20


def _name(row: Model) -> str:
    return str(row._meta.verbose_name)


def holding(row: Any, now: datetime) -> dict[str, Any]:
    """Who holds the row, as the audit log records it."""
    active = row.held_until is not None and row.held_until > now
    holder = row.held_by.get_username() if row.held_by else None
    state: dict[str, Any] = {
        "held_by": holder,
        "held_until": iso(row.held_until),
    }
    if holder and not active:
        state["expired"] = True
    return state


def refuse_if_held(row: Any, user: AbstractBaseUser, now: datetime) -> None:
    if is_held_by_other(row, user, now):
        until = timezone.localtime(row.held_until).strftime("%H:%M")
        raise Held(f"{_name(row)} {row.pk} is held by {row.held_by} until {until}")


def _take[Row: Model](row: Row, user: AbstractBaseUser, now: datetime, *, seconds: int) -> Row:
    """Hold ``row`` for ``seconds``, or renew one's own hold; refused with ``Held`` when
    someone else holds it. Holding one row of a kind frees the others this person held."""
    model = type(row)
    held: Any = row
    until = now + timedelta(seconds=seconds)
    before = holding(held, now)
    renewal = is_held_by(held, user, now)
    # The conditional update is the guard against a race between two people: only one of two
    # simultaneous claims on a free row matches the filter.
    claimed = (
        model._default_manager.filter(pk=row.pk)
        .filter(free_q(now) | Q(held_by=user.pk))
        .update(held_by=user, held_until=until)
    )
    if not claimed:
        row.refresh_from_db(fields=["held_by", "held_until"])
        refuse_if_held(row, user, now)
        raise Held(f"{_name(row)} {row.pk} was just taken by someone else")
    # One person holds one row at a time: moving on frees the one left behind for the others.
    for other in model._default_manager.filter(held_by=user.pk, held_until__gt=now).exclude(
        pk=row.pk
    ):
        _give_back(other, user, now, why="moved on")
    held.held_by, held.held_until = user, until
    if not renewal:  # the page's heartbeat renewing one's own hold is not news
        audit_event_record(
            actor=user,
            verb=f"{audit_type(row)}.hold",
            target=row,
            before=before,
            after={"held_by": user.get_username(), "held_until": iso(until)},
        )
    return row


def _give_back(row: Model, user: AbstractBaseUser, now: datetime, *, why: str) -> None:
    """Free the row, recording why; freeing someone else's hold is marked as an override."""
    held: Any = row
    before = holding(held, now)
    type(row)._default_manager.filter(pk=row.pk).update(held_by=None, held_until=None)
    held.held_by, held.held_until = None, None
    after: dict[str, Any] = {"held_by": None, "held_until": None, "why": why}
    if before["held_by"] not in (None, user.get_username()):
        after["override"] = True
    audit_event_record(
        actor=user, verb=f"{audit_type(row)}.release", target=row, before=before, after=after
    )


@dataclass(frozen=True)
class HoldPolicy[Row: Model]:
    """Who may hold which rows of one kind."""

    perm: str  # to hold a row, and to give one's own back
    action: str  # what a refusal says the person may not do ("review candidates")
    override_perm: str  # to give back someone else's hold (recorded as an override)
    override_action: str
    locked: Callable[[int], Row]  # the row locked for the transaction; refuses a missing one
    check_workable: Callable[[Row, AbstractBaseUser], None]  # refuses (Conflict) what isn't theirs
    # The rows left for this person at this moment, in the order "next" takes them; ``scope``
    # narrows them (the desk's queue filters, a behaviour's pairs).
    open_rows: Callable[[AbstractBaseUser, datetime, Any], QuerySet[Row]]


def hold[Row: Model](
    policy: HoldPolicy[Row], *, user: AbstractBaseUser, row_id: int, now: datetime | None = None
) -> Row:
    """Hold the row for HOLD_SECONDS (or renew one's hold) so nobody else works it meanwhile; its
    page renews the hold while open and gives it back when left."""
    require(user, policy.perm, policy.action)
    now = now or timezone.now()
    with transaction.atomic():
        row = policy.locked(row_id)
        policy.check_workable(row, user)
        return _take(row, user, now, seconds=hold_seconds())


def hold_next[Row: Model](
    policy: HoldPolicy[Row],
    *,
    user: AbstractBaseUser,
    scope: Any = None,
    after: int | None = None,
    now: datetime | None = None,
) -> Row | None:
    """Hold the next open row (in its order) this person may work: after ``after``,
    wrapping round, or without it the one they already hold first. A row refused meanwhile (held
    by someone else, decided since the query ran) is passed over for the next."""
    require(user, policy.perm, policy.action)
    now = now or timezone.now()
    rows = policy.open_rows(user, now, scope)
    tried: set[int] = set()
    with transaction.atomic():
        for _attempt in range(ATTEMPTS):
            qs = rows.exclude(pk__in=tried)
            if after is None:
                pk = (
                    qs.filter(held_by=user.pk, held_until__gt=now)
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
                    row = policy.locked(pk)
                    policy.check_workable(row, user)
                    return _take(row, user, now, seconds=hold_seconds())
            except Conflict:
                continue
    return None


def release[Row: Model](
    policy: HoldPolicy[Row],
    *,
    user: AbstractBaseUser,
    row_id: int,
    left: bool = False,
    now: datetime | None = None,
) -> Row:
    """Give a row back. Its holder may; so may someone with the policy's ``override_perm``
    (recorded as an override), say when a colleague left one held. ``left``: the page gave it
    back as its tab closed or navigated away."""
    require(user, policy.perm, policy.action)
    now = now or timezone.now()
    with transaction.atomic():
        row: Any = policy.locked(row_id)
        if not (row.held_until and row.held_until > now):
            raise NotHeld(f"{_name(row)} {row.pk} is not held")
        if row.held_by_id != user.pk:
            require(user, policy.override_perm, policy.override_action)
        _give_back(row, user, now, why=LEFT if left else "released")
        return row
