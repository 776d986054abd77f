"""Preference labelling with the review desk's machinery: a labeller holds one pair at a time
(the conditional update wins a race once), sides are their own and recorded, labels are blind
until a pair is complete, and agreement is measured by the desk's statistics."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from groundwork.access.errors import Conflict, Held, Invalid
from groundwork.access.roles import ANNOTATOR
from groundwork.models import AuditEvent
from groundwork.services import holds
from tasks_review.core.agreement import cohen_kappa, krippendorff_alpha_nominal
from tests.training.factories.loop import behaviour_with, pass_and_fail, tasks_of
from training.models import PairLabel, PreferencePair
from training.selectors import labels as reads
from training.services import labels
from training.services.labels import PAIRS
from training.services.pairs import pairs_build

pytestmark = pytest.mark.django_db


@pytest.fixture
def pairs(people, settings):
    """Three outcome pairs of one behaviour, each needing two labels."""
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    behaviour = behaviour_with(train=3)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    return pairs_build(user=people.bob, behaviour_id=behaviour.pk)


def label(user, pair, choice="A", **kwargs) -> PairLabel:
    left = reads.sides(pair, user).left
    return labels.pair_label_submit(user=user, pair_id=pair.pk, choice=choice, left=left, **kwargs)


def labeller(name: str) -> User:
    user = User.objects.create_user(name)
    user.groups.add(Group.objects.get(name=ANNOTATOR))
    return user


# -- holds -----------------------------------------------------------------------------------------


def test_next_holds_the_first_pair_in_build_order_and_audits_it(people, pairs):
    got = holds.hold_next(PAIRS, user=people.alice)
    assert got.pk == pairs[0].pk
    row = PreferencePair.objects.get(pk=got.pk)
    assert row.held_by == people.alice and row.held_until > timezone.now()
    [event] = AuditEvent.objects.filter(verb="preference_pair.hold")
    assert event.target_id == str(got.pk) and event.after["held_by"] == "alice"


def test_a_pair_held_by_one_labeller_is_refused_to_another(people, pairs):
    holds.hold(PAIRS, user=people.alice, row_id=pairs[0].pk)
    with pytest.raises(Conflict, match="held by alice"):
        holds.hold(PAIRS, user=people.bob, row_id=pairs[0].pk)
    assert holds.hold_next(PAIRS, user=people.bob).pk == pairs[1].pk


def test_the_conditional_update_refuses_a_claim_that_lost_the_race(people, pairs):
    stale = PreferencePair.objects.get(pk=pairs[0].pk)  # read while still free
    PreferencePair.objects.filter(pk=stale.pk).update(
        held_by=people.alice, held_until=timezone.now() + timedelta(minutes=5)
    )
    with pytest.raises(Held):
        holds._take(stale, people.bob, timezone.now(), seconds=60)
    assert PreferencePair.objects.get(pk=stale.pk).held_by == people.alice


def test_a_labeller_holds_one_pair_at_a_time(people, pairs):
    holds.hold(PAIRS, user=people.alice, row_id=pairs[0].pk)
    holds.hold(PAIRS, user=people.alice, row_id=pairs[1].pk)
    assert PreferencePair.objects.get(pk=pairs[0].pk).held_by is None
    [released] = AuditEvent.objects.filter(verb="preference_pair.release")
    assert released.after["why"] == "moved on"


def test_skipping_releases_the_pair_and_the_next_comes_after_it_wrapping_round(people, pairs):
    holds.hold(PAIRS, user=people.alice, row_id=pairs[2].pk)
    holds.release(PAIRS, user=people.alice, row_id=pairs[2].pk)
    got = holds.hold_next(PAIRS, user=people.alice, after=pairs[2].pk)
    assert got.pk == pairs[0].pk


def test_an_expired_hold_is_free_and_only_the_holder_or_a_lead_releases(people, pairs):
    then = timezone.now() - timedelta(hours=1)
    holds.hold(PAIRS, user=people.alice, row_id=pairs[0].pk, now=then)
    holds.hold(PAIRS, user=people.bob, row_id=pairs[0].pk)
    with pytest.raises(PermissionDenied):
        holds.release(PAIRS, user=people.alice, row_id=pairs[0].pk)
    holds.release(PAIRS, user=people.dave, row_id=pairs[0].pk)
    event = AuditEvent.objects.filter(verb="preference_pair.release").last()
    assert event.after["override"] is True and event.before["held_by"] == "bob"


# -- labels ----------------------------------------------------------------------------------------


def test_a_label_records_the_rollout_chosen_and_the_one_shown_left(people, pairs):
    pair = pairs[0]
    sides = reads.sides(pair, people.alice)
    holds.hold(PAIRS, user=people.alice, row_id=pair.pk)
    got = labels.pair_label_submit(
        user=people.alice, pair_id=pair.pk, choice="B", left=sides.left, tag="verified"
    )
    assert got.chosen_id == sides.right and got.left_id == sides.left
    assert got.tag == "verified"
    row = PreferencePair.objects.get(pk=pair.pk)
    assert row.held_by is None and row.status == PreferencePair.Status.OPEN
    event = AuditEvent.objects.get(verb="preference_pair.label")
    assert event.after["left"] == sides.left and event.after["labels"] == 1
    assert "verdict" not in event.after  # the audit log must not undo blind labelling


def test_a_tie_chooses_no_rollout(people, pairs):
    assert label(people.alice, pairs[0], "tie").chosen_id is None


def test_both_bad_chooses_no_rollout_and_is_not_a_tie(people, pairs):
    tie = label(people.alice, pairs[0], "tie")
    bad = label(people.alice, pairs[1], "both_bad")
    assert bad.chosen_id is None and bad.both_bad and bad.verdict == "both_bad"
    assert not tie.both_bad and tie.verdict == "tie"


def test_a_label_against_sides_the_labeller_was_not_shown_is_refused(people, pairs):
    pair = pairs[0]
    wrong = reads.sides(pair, people.alice).right
    with pytest.raises(Conflict, match="not shown to you that way round"):
        labels.pair_label_submit(user=people.alice, pair_id=pair.pk, choice="A", left=wrong)
    assert not PairLabel.objects.exists()


def test_sides_are_stable_for_a_labeller_and_differ_between_labellers(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    behaviour = behaviour_with(train=10)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    pairs = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    alice = [reads.sides(p, people.alice).left for p in pairs]
    assert alice == [reads.sides(p, people.alice).left for p in pairs]
    bob = [reads.sides(p, people.bob).left for p in pairs]
    assert alice != bob
    assert {p.rollout_a_id for p in pairs} & set(alice)  # neither side always first
    assert {p.rollout_b_id for p in pairs} & set(alice)


def test_bad_choices_and_tags_are_refused_in_words(people, pairs):
    with pytest.raises(Invalid, match="choose A, B, tie or both_bad"):
        label(people.alice, pairs[0], "left")
    with pytest.raises(Invalid, match="unknown rationale tag"):
        label(people.alice, pairs[0], "A", tag="vibes")


def test_a_labeller_labels_a_pair_once(people, pairs):
    label(people.alice, pairs[0])
    with pytest.raises(Conflict, match="already labelled"):
        label(people.alice, pairs[0], "B")


def test_labelling_a_pair_someone_else_holds_is_refused(people, pairs):
    holds.hold(PAIRS, user=people.bob, row_id=pairs[0].pk)
    with pytest.raises(Conflict, match="held by bob"):
        label(people.alice, pairs[0])


def test_labels_stay_hidden_until_the_pair_has_all_it_needs(people, pairs):
    pair = pairs[0]
    label(people.alice, pair)
    mine = reads.labels_for(pair, people.alice)
    assert mine.mine is not None and mine.visible == [] and mine.hidden_count == 0
    other = reads.labels_for(pair, people.bob)
    # Bob sees that a label is in, not what it says; and not even after his own.
    assert other.mine is None and other.visible == [] and other.hidden_count == 1
    label(people.bob, pair)
    pair.refresh_from_db()
    assert pair.status == PreferencePair.Status.COMPLETE
    done = reads.labels_for(pair, people.bob)
    assert [lab.labeller for lab in done.visible] == [people.alice] and done.hidden_count == 0


def test_a_complete_pair_leaves_the_queue(people, pairs):
    label(people.alice, pairs[0])
    label(people.bob, pairs[0])
    assert holds.hold_next(PAIRS, user=people.dave).pk == pairs[1].pk
    with pytest.raises(Conflict, match="has all its labels"):
        holds.hold(PAIRS, user=people.dave, row_id=pairs[0].pk)


def test_labelling_needs_the_label_permission(people, pairs):
    with pytest.raises(PermissionDenied):
        holds.hold_next(PAIRS, user=people.eve)
    with pytest.raises(PermissionDenied):
        label(people.carol, pairs[0])  # an approver does not label


# -- agreement and preference ----------------------------------------------------------------------


def test_agreement_is_kappa_per_labeller_pair_and_alpha_over_a_b_tie_both_bad(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 3}
    behaviour = behaviour_with(train=4)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    pairs = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    frank = labeller("frank")
    # Verdicts in the pairs' own frame: "a" is rollout_a, whatever side each labeller saw it.
    table = {
        "alice": ["a", "a", "b", "tie"],
        "bob": ["a", "b", "b", "tie"],
        "frank": ["a", "a", "b", "both_bad"],
    }
    who = {"alice": people.alice, "bob": people.bob, "frank": frank}
    for name, verdicts in table.items():
        for pair, verdict in zip(pairs, verdicts, strict=True):
            sides = reads.sides(pair, who[name])
            target = {"a": pair.rollout_a_id, "b": pair.rollout_b_id}.get(verdict)
            choice = "tie" if target is None else ("A" if target == sides.left else "B")
            label(who[name], pair, "both_bad" if verdict == "both_bad" else choice)

    agreement = reads.label_agreement(behaviour.pk)
    by_pair = {(p.a, p.b): p for p in agreement.pairs}
    expected = cohen_kappa(list(zip(table["alice"], table["bob"], strict=True)))
    assert by_pair[("alice", "bob")].kappa.value == pytest.approx(expected.value)
    assert by_pair[("alice", "bob")].agreed == 3 and by_pair[("alice", "bob")].n == 4
    alpha, units, values = krippendorff_alpha_nominal(
        [[table[n][i] for n in table] for i in range(4)]
    )
    assert agreement.alpha.value == pytest.approx(alpha.value)
    assert (agreement.units, agreement.values) == (units, values) == (4, 12)
    assert agreement.decisions == {"a": 5, "b": 4, "tie": 2, "both_bad": 1}


def test_open_pairs_do_not_count_towards_agreement(people, pairs):
    label(people.alice, pairs[0])
    agreement = reads.label_agreement()
    assert agreement.reviews == 0 and agreement.alpha.value is None
    assert agreement.alpha.reason == "no pair has two or more labels"


def test_the_preference_is_the_labellers_majority_else_the_reward_where_chosen(people, pairs):
    pair = pairs[0]
    rows = lambda: list(pair.labels.all())  # noqa: E731
    # No labels yet: no preference, unless the behaviour takes the verified reward's word.
    assert reads.preference(pair, rows()).basis == "unlabelled"
    got = reads.preference(pair, rows(), from_rewards=True)
    assert (got.chosen, got.labels, got.agreement) == (pair.preferred_id, 0, None)
    assert got.basis == "reward"
    # Both labellers prefer the failing one: people win once the pair is complete.
    failing = pair.rollout_b_id if pair.preferred_id == pair.rollout_a_id else pair.rollout_a_id
    for user in (people.alice, people.bob):
        sides = reads.sides(pair, user)
        label(user, pair, "A" if sides.left == failing else "B")
    pair.refresh_from_db()
    got = reads.preference(pair, rows())
    assert (got.chosen, got.rejected, got.labels, got.agreement) == (
        failing,
        pair.preferred_id,
        2,
        1.0,
    )


def test_lowering_labels_per_pair_in_the_app_completes_the_pairs_that_have_enough(people, pairs):
    label(people.alice, pairs[0])
    assert PreferencePair.objects.get(pk=pairs[0].pk).status == PreferencePair.Status.OPEN
    labels.labels_per_pair_set(user=people.dave, value=1)
    assert reads.labels_needed() == 1
    assert PreferencePair.objects.get(pk=pairs[0].pk).status == PreferencePair.Status.COMPLETE
    assert PreferencePair.objects.get(pk=pairs[1].pk).status == PreferencePair.Status.OPEN
    [done] = AuditEvent.objects.filter(verb="preference_pair.complete")
    assert done.target_id == str(pairs[0].pk)
    assert done.after == {"status": "complete", "labels": 1, "labels_needed": 1}
    [changed] = AuditEvent.objects.filter(verb="desk_setting.change")
    assert changed.after["value"] == 1 and changed.before["value"] == 2
