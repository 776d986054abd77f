"""Preference labels: a labeller holds a pair, says which rollout is better (or a tie), and the
pair completes when it has as many labels as it needs.

The hold is the review desk's (``tasks_review.services.holds``: a conditional update, one pair
per labeller, audited); the sides a labeller saw are checked against the ones the page showed
them and recorded with the label. Every write checks the role and audits in its transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from groundwork.access.errors import Conflict, Held, Invalid, NotFound, require
from groundwork.selectors.holds import hold_seconds
from groundwork.services import holds
from groundwork.services.audit import audit_event_record
from tasks_review.models import DeskSetting
from tasks_review.services.desk_settings import desk_setting_change
from trajectories.core.limits import echo

from ..models import PairLabel, PreferencePair
from ..roles import DECIDE, LABEL
from ..selectors import labels as reads

# What a labeller presses, in screen terms: the left one (A), the right one (B), or a tie.
CHOICES = ("A", "B", "tie")


def pair_locked(pair_id: int) -> PreferencePair:
    pair = (
        # The pair's row only: PostgreSQL refuses FOR UPDATE on the outer join to its holder.
        PreferencePair.objects.select_for_update(of=("self",))
        .select_related("reserved_by")
        .filter(pk=pair_id)
        .first()
    )
    if pair is None:
        raise NotFound(f"preference pair {pair_id} does not exist")
    return pair


def _check_workable(pair: PreferencePair, user: AbstractBaseUser) -> None:
    if pair.status != PreferencePair.Status.OPEN:
        raise Conflict(f"pair {pair.pk} has all its labels")
    if pair.labels.filter(labeller=user.pk).exists():
        raise Conflict(f"you already labelled pair {pair.pk}")


def _reserve(pair: PreferencePair, user: AbstractBaseUser, now: datetime) -> PreferencePair:
    try:
        return holds.reserve(pair, user, now, seconds=hold_seconds())
    except Held as refused:
        raise Conflict(str(refused)) from None


def pair_reserve(
    *, user: AbstractBaseUser, pair_id: int, now: datetime | None = None
) -> PreferencePair:
    """Hold a pair for HOLD_SECONDS (or renew one's hold) so nobody else labels it meanwhile;
    the page renews it while open and gives it back when left."""
    require(user, LABEL, "label preference pairs")
    now = now or timezone.now()
    with transaction.atomic():
        pair = pair_locked(pair_id)
        _check_workable(pair, user)
        return _reserve(pair, user, now)


def pair_reserve_next(
    *,
    user: AbstractBaseUser,
    behaviour_id: int | None = None,
    after: int | None = None,
    now: datetime | None = None,
) -> PreferencePair | None:
    """Hold the next pair left for this labeller (of one behaviour, when given): after
    ``after``, wrapping round, or the one they already hold first."""
    require(user, LABEL, "label preference pairs")
    now = now or timezone.now()

    def take(pk: int) -> PreferencePair:
        pair = pair_locked(pk)
        _check_workable(pair, user)  # completed or labelled since the query ran, say
        return _reserve(pair, user, now)

    return holds.reserve_next(
        open_=reads.workable(user, now, behaviour_id),
        user=user,
        now=now,
        after=after,
        take=take,
        skip=(Conflict,),
    )


def pair_release(
    *, user: AbstractBaseUser, pair_id: int, left: bool = False, now: datetime | None = None
) -> PreferencePair:
    """Give a pair back: its holder may, and so may someone who decides about behaviours
    (recorded as an override), say when a colleague left one held. ``left``: the page gave it
    back as its tab closed or navigated away."""
    require(user, LABEL, "label preference pairs")
    now = now or timezone.now()
    with transaction.atomic():
        pair = pair_locked(pair_id)
        if not (pair.reserved_until and pair.reserved_until > now):
            raise Conflict(f"pair {pair.pk} is not reserved")
        if pair.reserved_by_id != user.pk:
            require(user, DECIDE, "release another labeller's pair")
        holds.release(pair, user, now, why=holds.LEFT if left else "released")
        return pair


def pair_label_submit(
    *,
    user: AbstractBaseUser,
    pair_id: int,
    choice: str,
    left: int,
    tag: str = "",
    now: datetime | None = None,
) -> PairLabel:
    """Record one labeller's verdict: ``choice`` is A (the left rollout), B (the right) or tie,
    ``left`` the rollout the page showed on the left. The pair completes, and its labels become
    visible, when it has LABELS_PER_PAIR of them."""
    require(user, LABEL, "label preference pairs")
    if choice not in CHOICES:
        raise Invalid("choose A, B or tie")
    if tag and tag not in PairLabel.Tag.values:
        raise Invalid(f"unknown rationale tag {echo(tag)}")
    now = now or timezone.now()
    with transaction.atomic():
        pair = pair_locked(pair_id)
        _check_workable(pair, user)
        try:
            holds.refuse_if_held(pair, user, now)
        except Held as refused:
            raise Conflict(str(refused)) from None
        shown = reads.sides(pair, user)
        if left != shown.left:
            raise Conflict(f"pair {pair.pk} was not shown to you that way round; open it again")
        chosen = {"A": shown.left, "B": shown.right, "tie": None}[choice]
        before = {"status": pair.status, "labels": pair.labels.count(), **holds.holding(pair, now)}
        label = PairLabel.objects.create(
            pair=pair, labeller=user, chosen_id=chosen, left_id=shown.left, tag=tag
        )
        count = before["labels"] + 1
        status = PreferencePair.Status.OPEN
        if count >= reads.labels_needed():
            status = PreferencePair.Status.COMPLETE
        # A label ends the labeller's hold, so the next one can take the pair at once.
        PreferencePair.objects.filter(pk=pair.pk).update(
            status=status, reserved_by=None, reserved_until=None
        )
        pair.status, pair.reserved_by, pair.reserved_until = status, None, None
        audit_event_record(
            actor=user,
            verb="preference_pair.label",
            target=pair,
            before=before,
            # Neither the verdict nor its rationale (a "correct result" on a pair whose outcomes
            # differ tells the choice): the audit log is readable by labellers, and must not undo
            # blind labelling; the label row keeps both.
            after={
                "label_id": label.pk,
                "left": shown.left,
                "labels": count,
                "status": status.value,
                "reserved_by": None,
                "reserved_until": None,
            },
        )
        return label


def labels_per_pair_set(*, user: AbstractBaseUser, value: Any) -> DeskSetting:
    """Change how many labels a pair needs (desk settings); a lower number completes at once
    the open pairs that already have that many, each audited as ``preference_pair.complete``."""
    with transaction.atomic():
        row = desk_setting_change(user=user, key=DeskSetting.Key.LABELS_PER_PAIR, value=value)
        enough = (
            PreferencePair.objects.filter(status=PreferencePair.Status.OPEN)
            .annotate(count=Count("labels"))
            .filter(count__gte=row.value)
        )
        for pk, count in enough.values_list("pk", "count"):
            pair = pair_locked(pk)
            if pair.status != PreferencePair.Status.OPEN:
                continue  # completed since the query ran
            PreferencePair.objects.filter(pk=pk).update(
                status=PreferencePair.Status.COMPLETE, reserved_by=None, reserved_until=None
            )
            audit_event_record(
                actor=user,
                verb="preference_pair.complete",
                target=pair,
                before={"status": pair.status, "labels": count},
                after={"status": "complete", "labels": count, "labels_needed": row.value},
            )
        return row
