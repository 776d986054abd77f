"""DPO and KTO follow the people who labelled: the majority's side even against the reward,
ties, both-bad verdicts and split votes left out (never filled in from the reward), unlabelled
pairs from rewards only where the behaviour chose that; the manifest counts the labels and whose
word each followed."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasets import Dataset

from groundwork.access.errors import NotPermitted
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.models import TrainingExport
from training.selectors import labels as reads
from training.services import labels
from training.services.behaviours import behaviour_reward_preferences_set
from training.services.exports import training_export_create, training_export_execute
from training.services.pairs import pairs_build

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(people, settings):
    """Three train tasks, each an outcome pair (passing against failing), two labels a pair."""
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    behaviour = behaviour_with(train=3)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    evaluated(behaviour)
    return behaviour, pairs_build(user=people.bob, behaviour_id=behaviour.pk)


BOTH_BAD = "both bad"


def vote(user, pair, rollout_id):
    """``user`` labels ``pair`` for rollout ``rollout_id`` (None: a tie; BOTH_BAD: both bad)."""
    shown = reads.sides(pair, user)
    choice = "tie" if rollout_id is None else ("A" if shown.left == rollout_id else "B")
    choice = "both_bad" if rollout_id == BOTH_BAD else choice
    labels.pair_label_submit(user=user, pair_id=pair.pk, choice=choice, left=shown.left)


def other(pair):
    return pair.rollout_a_id if pair.preferred_id == pair.rollout_b_id else pair.rollout_b_id


def dpo(behaviour, out: Path) -> TrainingExport:
    row = training_export_create(user=None, behaviour_id=behaviour.pk, kind="dpo", out_dir=out)
    done = training_export_execute(export_id=row.pk)
    assert done is not None
    return done


def test_chosen_sides_follow_the_labellers_majority_even_against_the_reward(
    people, world, tmp_path
):
    behaviour, (against, tied, split) = world
    for user in (people.alice, people.bob):  # both prefer the failing side
        vote(user, against, other(against))
        vote(user, tied, None)
    vote(people.alice, split, split.preferred_id)
    vote(people.bob, split, other(split))
    done = dpo(behaviour, tmp_path / "dpo")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    [row] = done.manifest["labels"]["pairs"]
    assert row["pair_id"] == str(against.pk) and row["chosen"] == str(other(against))
    assert row["labels"] == 2 and row["agreement"] == 1.0
    assert done.manifest["labels"]["labels"] == 2
    preferences = done.manifest["provenance"]["preferences"]
    assert preferences == {
        "from_rewards": False,
        "pairs": {"labels": 1, "no_majority": 1, "tie": 1},
    }


def test_unlabelled_pairs_follow_rewards_only_where_the_behaviour_chose_that(
    people, world, tmp_path
):
    behaviour, pairs = world
    refused = dpo(behaviour, tmp_path / "none")
    assert refused.status == TrainingExport.Status.REFUSED
    with pytest.raises(NotPermitted):
        behaviour_reward_preferences_set(user=people.alice, behaviour_id=behaviour.pk, allow=True)
    behaviour_reward_preferences_set(user=people.bob, behaviour_id=behaviour.pk, allow=True)
    done = dpo(behaviour, tmp_path / "rewards")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    assert done.manifest["provenance"]["preferences"] == {
        "from_rewards": True,
        "pairs": {"reward": 3},
    }
    assert {p["chosen"] for p in done.manifest["labels"]["pairs"]} == {
        str(p.preferred_id) for p in pairs
    }
    assert done.manifest["labels"]["labels"] == 0


def test_a_pair_still_being_labelled_waits_for_its_labels(people, world, tmp_path):
    behaviour, (first, *_rest) = world
    behaviour_reward_preferences_set(user=people.bob, behaviour_id=behaviour.pk, allow=True)
    vote(people.alice, first, other(first))  # one of the two labels it needs
    done = dpo(behaviour, tmp_path / "dpo")
    assert done.manifest["provenance"]["preferences"]["pairs"] == {"labelling": 1, "reward": 2}
    assert str(first.pk) not in {p["pair_id"] for p in done.manifest["labels"]["pairs"]}


def test_kto_labels_follow_people_where_they_labelled_and_the_harness_elsewhere(
    people, world, tmp_path
):
    behaviour, (against, *_rest) = world
    for user in (people.alice, people.bob):  # both prefer the failing side of one pair
        vote(user, against, other(against))
    row = training_export_create(
        user=None, behaviour_id=behaviour.pk, kind="kto", out_dir=tmp_path / "kto"
    )
    done = training_export_execute(export_id=row.pk)
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    assert done.manifest["labels"] == {"label_from": {"harness": 4, "people": 2}}
    by_rollout = {s["trajectory_id"]: s["rows"][0] for s in done.manifest["sources"] if s["rows"]}
    data = Dataset.from_parquet(
        str(tmp_path / "kto" / "data" / "train-00000-of-00001.parquet"),
        cache_dir=str(tmp_path / "cache"),
    )
    assert data["label"][by_rollout[str(other(against))]] is True  # people chose it
    assert data["label"][by_rollout[str(against.preferred_id)]] is False


def test_ties_and_both_bad_pairs_are_left_out_of_dpo_and_counted(people, world, tmp_path):
    behaviour, (against, tied, bad) = world
    for user in (people.alice, people.bob):
        vote(user, against, other(against))
        vote(user, tied, None)
        vote(user, bad, BOTH_BAD)
    done = dpo(behaviour, tmp_path / "dpo")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    assert [p["pair_id"] for p in done.manifest["labels"]["pairs"]] == [str(against.pk)]
    assert done.manifest["provenance"]["preferences"]["pairs"] == {
        "both_bad": 1,
        "labels": 1,
        "tie": 1,
    }


def test_kto_leaves_out_the_rollouts_of_pairs_people_called_a_tie_or_both_bad(
    people, world, tmp_path
):
    behaviour, (against, tied, bad) = world
    for user in (people.alice, people.bob):
        vote(user, against, other(against))
        vote(user, tied, None)
        vote(user, bad, BOTH_BAD)
    row = training_export_create(
        user=None, behaviour_id=behaviour.pk, kind="kto", out_dir=tmp_path / "kto"
    )
    done = training_export_execute(export_id=row.pk)
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    # Only the decided pair's two rollouts: people's word, never the harness's in its place.
    assert done.manifest["labels"] == {"label_from": {"harness": 0, "people": 2}}
    exported = {s["trajectory_id"] for s in done.manifest["sources"]}
    assert exported == {str(against.rollout_a_id), str(against.rollout_b_id)}
    assert done.manifest["provenance"]["kto"] == {
        "labels_disagree": 0,
        "pairs": {"both_bad": 1, "labels": 1, "tie": 1},
        "no_preference": {"tie": 2, "both_bad": 2},
    }
