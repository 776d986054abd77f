"""Preference pairs are built from the rollouts of each train task: differing outcomes first,
then differing rewards, then pairs that both passed; never twice, never from held-out tasks."""

from __future__ import annotations

import pytest

from groundwork.access.errors import NotPermitted
from groundwork.models import AuditEvent
from tests.training.factories.loop import (
    FIXED,
    behaviour_with,
    fixing,
    guessing,
    make_trajectory_rollout,
    pass_and_fail,
    tasks_of,
)
from training.models import BehaviourTask, PreferencePair, Rollout
from training.services.pairs import pairs_build

pytestmark = pytest.mark.django_db


def test_a_task_with_a_passing_and_a_failing_rollout_gives_one_outcome_pair(people):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    good, bad = pass_and_fail(task)
    [pair] = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    assert (pair.rollout_a_id, pair.rollout_b_id) == (good.pk, bad.pk)
    assert pair.basis == PreferencePair.Basis.OUTCOME
    assert pair.preferred_id == good.pk and pair.reward_gap == 1.0
    assert pair.task == task and pair.status == PreferencePair.Status.OPEN


def test_pairs_are_created_most_informative_first(people):
    behaviour = behaviour_with(train=2)
    first, second = tasks_of(behaviour)
    # The first task: two rollouts that both passed (path quality only).
    for extra in ("ls", "git status"):
        make_trajectory_rollout(first.candidate, fixing(extra), reward=1.0, world=FIXED)
    # The second: one passed, one failed.
    pass_and_fail(second)
    pairs = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    assert [p.basis for p in pairs] == ["outcome", "path_quality"]
    assert [p.task_id for p in pairs] == [second.pk, first.pk]
    assert pairs[0].pk < pairs[1].pk  # the queue serves by id
    assert pairs[1].preferred_id is None


def test_building_again_adds_only_the_new_pairs_and_audits_each_build(people):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    pass_and_fail(task)
    assert len(pairs_build(user=people.bob, behaviour_id=behaviour.pk)) == 1
    assert pairs_build(user=people.bob, behaviour_id=behaviour.pk) == []
    make_trajectory_rollout(task.candidate, fixing("ls"), reward=1.0, world=FIXED)
    added = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    assert len(added) == 2  # the newcomer against each of the two
    assert PreferencePair.objects.filter(behaviour=behaviour).count() == 3
    events = AuditEvent.objects.filter(verb="behaviour.pairs").order_by("id")
    assert [e.after["pairs"] for e in events] == [1, 3]
    assert events[1].actor == people.bob


def test_held_out_tasks_ungraded_rollouts_and_equal_failures_make_no_pair(people):
    behaviour = behaviour_with(train=2, held_out=1)
    [held_out] = tasks_of(behaviour, BehaviourTask.Split.HELD_OUT)
    pass_and_fail(held_out)
    first, second = tasks_of(behaviour)
    make_trajectory_rollout(first.candidate, fixing(), reward=1.0, world=FIXED)
    make_trajectory_rollout(first.candidate, guessing(), reward=None)  # not graded yet
    make_trajectory_rollout(second.candidate, guessing(), reward=0.0)
    make_trajectory_rollout(second.candidate, guessing(), reward=0.0)
    assert pairs_build(user=people.bob, behaviour_id=behaviour.pk) == []


def test_a_rollout_without_a_trajectory_cannot_be_shown_so_makes_no_pair(people):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    good, _bad = pass_and_fail(task)
    Rollout.objects.filter(pk=good.pk).update(trajectory=None)
    assert pairs_build(user=people.bob, behaviour_id=behaviour.pk) == []


def test_only_people_who_prepare_training_data_build_pairs(people):
    behaviour = behaviour_with(train=1)
    with pytest.raises(NotPermitted):
        pairs_build(user=people.alice, behaviour_id=behaviour.pk)
