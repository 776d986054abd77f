"""Reads behind preference labelling: which pairs are left for a labeller, the sides they see,
what they may see of others' labels (nothing until a pair is complete), the agreement between
labellers, and what a pair's labels prefer."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from groundwork.selectors.holds import free_q, held_q
from tasks_review.core.agreement import Undefined
from tasks_review.models import DeskSetting
from tasks_review.selectors import desk_settings
from tasks_review.selectors.reviewer_agreement import Agreement, agreement_over

from ..models import PairLabel, PreferencePair

VERDICTS = ("a", "b", "tie", "both_bad")
BOTH_BAD = "both_bad"  # a vote for neither side, in ``preference``'s count
# The statistics' reasons in the labelling page's words: its items are pairs, its ratings labels.
WORDING = {
    Undefined.NO_SHARED_ITEMS: "no pair labelled by both",
    Undefined.NO_PAIRABLE_UNITS: "no pair has two or more labels",
    Undefined.NO_VARIATION: "every label is the same (no variation to agree on)",
}


def labels_needed() -> int:
    """Set by an admin in the app (desk settings), else TRAJ2ENV_LABELS_PER_PAIR."""
    return desk_settings.value(DeskSetting.Key.LABELS_PER_PAIR)


def labelled_by(user: AbstractBaseUser) -> Exists:
    return Exists(PairLabel.objects.filter(pair=OuterRef("pk"), labeller=user.pk))


def workable(
    user: AbstractBaseUser, now: datetime, behaviour_id: int | None = None
) -> QuerySet[PreferencePair]:
    """Open pairs this labeller has not labelled and nobody else holds, in the order they were
    built (the most informative first)."""
    qs = _unlabelled(user, behaviour_id).filter(free_q(now) | Q(held_by=user.pk))
    return qs.order_by("id")


def held_by_others(
    user: AbstractBaseUser, now: datetime, behaviour_id: int | None = None
) -> QuerySet[PreferencePair]:
    """Open pairs this labeller could label but for someone else's hold, soonest free first:
    what "Label the next pair" names when nothing is free."""
    qs = _unlabelled(user, behaviour_id).filter(held_q(user, now))
    return qs.select_related("held_by").order_by("held_until")


def _unlabelled(user: AbstractBaseUser, behaviour_id: int | None) -> QuerySet[PreferencePair]:
    qs = PreferencePair.objects.filter(status=PreferencePair.Status.OPEN).exclude(labelled_by(user))
    return qs if behaviour_id is None else qs.filter(behaviour_id=behaviour_id)


@dataclass(frozen=True)
class Sides:
    left: int  # rollout ids
    right: int


def sides(pair: PreferencePair, user: AbstractBaseUser) -> Sides:
    """Which rollout this labeller sees on the left. A keyed hash of the pair and the labeller:
    unpredictable and independent between labellers (a side bias cannot line up with the
    rollouts' order), yet the same on every visit, so the page and the label agree."""
    key = settings.SECRET_KEY.encode()
    digest = hmac.new(key, f"pair-sides:{pair.pk}:{user.pk}".encode(), hashlib.sha256).digest()
    a, b = pair.rollout_a_id, pair.rollout_b_id
    return Sides(a, b) if digest[0] & 1 == 0 else Sides(b, a)


@dataclass(frozen=True)
class LabellerView:
    """What one labeller may see of a pair's labels. Blind labelling: until the pair has all the
    labels it needs, nobody sees another's, not even after giving their own."""

    mine: PairLabel | None
    visible: list[PairLabel]
    hidden_count: int
    count: int
    needed: int


def labels_for(pair: PreferencePair, user: AbstractBaseUser) -> LabellerView:
    labels = list(pair.labels.select_related("labeller").order_by("id"))
    mine = next((label for label in labels if label.labeller_id == user.pk), None)
    others = [label for label in labels if label.labeller_id != user.pk]
    needed = labels_needed()
    if pair.status == PreferencePair.Status.COMPLETE:
        return LabellerView(mine, others, 0, len(labels), needed)
    return LabellerView(mine, [], len(others), len(labels), needed)


def label_agreement(behaviour_id: int | None = None) -> Agreement:
    """Cohen's kappa per labeller pair and Krippendorff's alpha over A / B / tie / both bad, in
    the pairs' own frame (which rollout was preferred, whatever side it was shown on), on
    complete pairs only: an open pair's labels are still blind."""
    labels = PairLabel.objects.filter(pair__status=PreferencePair.Status.COMPLETE)
    if behaviour_id is not None:
        labels = labels.filter(pair__behaviour_id=behaviour_id)
    rows = labels.order_by("pair_id", "id").values_list(
        "pair_id", "labeller__username", "chosen_id", "pair__rollout_a_id", "both_bad"
    )
    ratings = (
        (pair_id, who, _verdict(chosen, a, both_bad)) for pair_id, who, chosen, a, both_bad in rows
    )
    return agreement_over(ratings, VERDICTS, WORDING)


def _verdict(chosen: int | None, rollout_a: int, both_bad: bool) -> str:
    if both_bad:
        return BOTH_BAD
    return "tie" if chosen is None else ("a" if chosen == rollout_a else "b")


@dataclass(frozen=True)
class Preference:
    """Which rollout of a pair is preferred and on whose word, or why none is."""

    chosen: int | None
    rejected: int | None
    labels: int  # labellers who decided it; 0 when the verified reward did
    agreement: float | None  # the majority's share of the labels
    # "labels" or "reward" when one is chosen; otherwise why not: "tie" (the majority said
    # tie), "both_bad" (the majority said neither is good), "no_majority", "labelling" (fewer
    # labels than a pair needs yet), "unlabelled" (the behaviour does not take the reward's
    # word), "no_reward_preference".
    basis: str


def preference(
    pair: PreferencePair, labels: list[PairLabel], *, from_rewards: bool = False
) -> Preference:
    """People's word where people labelled: the strict majority of a complete pair's labels, a
    tie, both bad or a split vote leaving the pair out (never the reward's side instead). An
    unlabelled pair follows its verified reward only where the behaviour chose that
    (``from_rewards``)."""
    a, b = pair.rollout_a_id, pair.rollout_b_id
    if labels:
        if pair.status != PreferencePair.Status.COMPLETE:
            return Preference(None, None, len(labels), None, "labelling")
        votes = Counter(BOTH_BAD if label.both_bad else label.chosen_id for label in labels)
        top, n = votes.most_common(1)[0]
        share = round(n / len(labels), 6)
        if n * 2 <= len(labels):
            return Preference(None, None, len(labels), share, "no_majority")
        if top is None:
            return Preference(None, None, len(labels), share, "tie")
        if top == BOTH_BAD:
            return Preference(None, None, len(labels), share, BOTH_BAD)
        assert isinstance(top, int)
        return Preference(top, b if top == a else a, len(labels), share, "labels")
    if not from_rewards:
        return Preference(None, None, 0, None, "unlabelled")
    if pair.preferred_id is None:
        return Preference(None, None, 0, None, "no_reward_preference")
    rejected = b if pair.preferred_id == a else a
    return Preference(pair.preferred_id, rejected, 0, None, "reward")


@dataclass(frozen=True)
class BehaviourPairs:
    behaviour_id: int
    slug: str
    total: int
    complete: int
    mine: int  # labelled by this user
    left: int  # still open to this user


def pair_counts(user: AbstractBaseUser, now: datetime) -> list[BehaviourPairs]:
    """Per behaviour with pairs: how many, how many complete, and what is left for this user."""
    rows = (
        PreferencePair.objects.values("behaviour_id", "behaviour__slug")
        .annotate(
            # distinct: the join with labels repeats a pair once per label.
            total=Count("id", distinct=True),
            complete=Count("id", filter=Q(status=PreferencePair.Status.COMPLETE), distinct=True),
            mine=Count("labels", filter=Q(labels__labeller=user.pk), distinct=True),
        )
        .order_by("behaviour__slug")
    )
    left = dict(
        workable(user, now)
        .order_by()
        .values("behaviour_id")
        .annotate(n=Count("id"))
        .values_list("behaviour_id", "n")
    )
    return [
        BehaviourPairs(
            r["behaviour_id"],
            r["behaviour__slug"],
            r["total"],
            r["complete"],
            r["mine"],
            left.get(r["behaviour_id"], 0),
        )
        for r in rows
    ]
