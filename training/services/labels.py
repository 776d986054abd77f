"""Preference labels: a labeller holds a pair, says which rollout is better (or a tie, or that
both are bad), and the pair completes when it has as many labels as it needs.

The hold is groundwork's (``groundwork.services.holds``: a conditional update, one pair per
labeller, audited); the sides a labeller saw are checked against the ones the page showed
them and recorded with the label. Every write checks the role and audits in its transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from groundwork.access.errors import Conflict, Invalid, NotFound, require
from groundwork.services import holds
from groundwork.services.audit import audit_event_record
from tasks_review.models import DeskSetting
from tasks_review.services.desk_settings import desk_setting_change
from trajectories.core.limits import echo

from ..models import PairLabel, PreferencePair
from ..roles import DECIDE, LABEL
from ..selectors import labels as reads

# What a labeller presses, in screen terms: the left one (A), the right one (B), a tie (both as
# good), or both bad (neither good enough to learn from).
CHOICES = ("A", "B", "tie", "both_bad")


def pair_locked(pair_id: int) -> PreferencePair:
    pair = (
        # The pair's row only: PostgreSQL refuses FOR UPDATE on the outer join to its holder.
        PreferencePair.objects.select_for_update(of=("self",))
        .select_related("held_by")
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


# Who may hold which pair (``holds.hold(PAIRS, ...)``, ``hold_next``, ``release``): labellers hold
# the open pairs they have not labelled (of one behaviour: the scope); one who decides about
# behaviours may give back another's.
PAIRS = holds.HoldPolicy(
    perm=LABEL,
    action="label preference pairs",
    override_perm=DECIDE,
    override_action="release another labeller's pair",
    locked=pair_locked,
    check_workable=_check_workable,
    open_rows=reads.workable,
)


def pair_label_submit(
    *,
    user: AbstractBaseUser,
    pair_id: int,
    choice: str,
    left: int,
    tag: str = "",
    now: datetime | None = None,
) -> PairLabel:
    """Record one labeller's verdict: ``choice`` is A (the left rollout), B (the right), tie or
    both_bad, ``left`` the rollout the page showed on the left. The pair completes, and its
    labels become visible, when it has LABELS_PER_PAIR of them."""
    require(user, LABEL, "label preference pairs")
    if choice not in CHOICES:
        raise Invalid("choose A, B, tie or both_bad")
    if tag and tag not in PairLabel.Tag.values:
        raise Invalid(f"unknown rationale tag {echo(tag)}")
    now = now or timezone.now()
    with transaction.atomic():
        pair = pair_locked(pair_id)
        _check_workable(pair, user)
        holds.refuse_if_held(pair, user, now)
        shown = reads.sides(pair, user)
        if left != shown.left:
            raise Conflict(f"pair {pair.pk} was not shown to you that way round; open it again")
        chosen = {"A": shown.left, "B": shown.right}.get(choice)
        before = {"status": pair.status, "labels": pair.labels.count(), **holds.holding(pair, now)}
        label = PairLabel.objects.create(
            pair=pair,
            labeller=user,
            chosen_id=chosen,
            both_bad=choice == "both_bad",
            left_id=shown.left,
            tag=tag,
        )
        count = before["labels"] + 1
        status = PreferencePair.Status.OPEN
        if count >= reads.labels_needed():
            status = PreferencePair.Status.COMPLETE
        # A label ends the labeller's hold, so the next one can take the pair at once.
        PreferencePair.objects.filter(pk=pair.pk).update(
            status=status, held_by=None, held_until=None
        )
        pair.status, pair.held_by, pair.held_until = status, None, None
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
                "held_by": None,
                "held_until": None,
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
                status=PreferencePair.Status.COMPLETE, held_by=None, held_until=None
            )
            audit_event_record(
                actor=user,
                verb="preference_pair.complete",
                target=pair,
                before={"status": pair.status, "labels": count},
                after={"status": "complete", "labels": count, "labels_needed": row.value},
            )
        return row
