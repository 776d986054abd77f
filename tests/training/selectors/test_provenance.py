"""One provenance rule for every export: review verdicts, held-out anywhere and re-grades reach
the loop, and the manifest says what was left out and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundwork.access.errors import NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.models import BehaviourTask, Rollout, TrainingExport
from training.selectors.provenance import held_out_anywhere
from training.services.behaviours import behaviour_tasks_add, behaviour_unreviewed_set
from training.services.exports import training_export_create, training_export_execute
from training.services.pairs import pairs_build

pytestmark = pytest.mark.django_db


def export(behaviour, kind: str, out: Path) -> TrainingExport:
    row = training_export_create(user=None, behaviour_id=behaviour.pk, kind=kind, out_dir=out)
    done = training_export_execute(export_id=row.pk)
    assert done is not None
    return done


def exported_rollouts(done: TrainingExport) -> set[str]:
    return {s["trajectory_id"] for s in done.manifest["sources"] if s["rows"]}


@pytest.fixture
def loop(people):
    """Three train tasks, each with a passing and a failing rollout, evaluated."""
    behaviour = behaviour_with(train=3)
    rollouts = {t.candidate_id: pass_and_fail(t) for t in tasks_of(behaviour)}
    evaluated(behaviour)
    return behaviour, rollouts


@pytest.mark.parametrize(
    ("review", "reason"),
    [
        (Candidate.ReviewStatus.REJECTED, "review_rejected"),
        (Candidate.ReviewStatus.NEEDS_FIX, "review_needs_fix"),
        (Candidate.ReviewStatus.PENDING, "review_pending"),
    ],
)
def test_a_task_not_accepted_on_the_desk_is_left_out_and_counted(loop, tmp_path, review, reason):
    behaviour, rollouts = loop
    first = tasks_of(behaviour)[0]
    Candidate.objects.filter(pk=first.candidate_id).update(review_status=review)
    done = export(behaviour, "kto", tmp_path / "kto")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    left = {str(r.pk) for r in rollouts[first.candidate_id]}
    assert not left & exported_rollouts(done)
    assert done.rows == 4
    assert done.manifest["provenance"]["tasks_left_out"] == {reason: 1}
    assert done.manifest["provenance"]["rollouts_left_out"] == {reason: 2}
    assert done.manifest["provenance"]["rule"]["review"] == "accepted only"


def test_pending_tasks_enter_only_where_the_behaviour_opted_in(people, loop, tmp_path):
    behaviour, _ = loop
    first, second = tasks_of(behaviour)[:2]
    Candidate.objects.filter(pk=first.candidate_id).update(
        review_status=Candidate.ReviewStatus.PENDING
    )
    Candidate.objects.filter(pk=second.candidate_id).update(
        review_status=Candidate.ReviewStatus.REJECTED
    )
    with pytest.raises(NotPermitted):
        behaviour_unreviewed_set(user=people.alice, behaviour_id=behaviour.pk, allow=True)
    behaviour_unreviewed_set(user=people.bob, behaviour_id=behaviour.pk, allow=True)
    event = AuditEvent.objects.get(verb="behaviour.unreviewed")
    assert event.after == {"allow_unreviewed": True}
    done = export(behaviour, "kto", tmp_path / "kto")
    assert done.rows == 4  # the pending task's rollouts enter; the rejected one's never
    assert done.manifest["provenance"]["tasks_left_out"] == {"review_rejected": 1}
    assert done.manifest["provenance"]["rule"]["review"] == "accepted or pending"


def test_a_task_kept_by_an_older_verifier_is_left_out(loop, tmp_path):
    behaviour, _ = loop
    first = tasks_of(behaviour)[0]
    Candidate.objects.filter(pk=first.candidate_id).update(verifier_version=1)
    done = export(behaviour, "sft", tmp_path / "sft")
    assert done.manifest["provenance"]["tasks_left_out"] == {"verifier_stale": 1}


def test_a_task_held_out_for_another_behaviour_never_trains_here(loop, tmp_path):
    behaviour, rollouts = loop
    first = tasks_of(behaviour)[0]
    other = behaviour_with("read-before-edit", train=0)
    BehaviourTask.objects.create(
        behaviour=other,
        candidate=first.candidate,
        task_key=first.candidate.key,
        split=BehaviourTask.Split.HELD_OUT,
    )
    assert held_out_anywhere([first.candidate]) == {first.candidate_id}
    done = export(behaviour, "kto", tmp_path / "kto")
    assert not {str(r.pk) for r in rollouts[first.candidate_id]} & exported_rollouts(done)
    assert done.manifest["provenance"]["tasks_left_out"] == {"held_out": 1}
    assert pairs_build(user=None, behaviour_id=behaviour.pk)
    assert not behaviour.pairs.filter(task=first).exists()


def test_a_re_graded_rollout_is_not_exported_on_its_older_eval_result(loop, tmp_path):
    behaviour, rollouts = loop
    good, _bad = rollouts[tasks_of(behaviour)[0].candidate_id]
    Rollout.objects.filter(pk=good.pk).update(reward=0.0)  # a re-grade found it did not fix it
    done = export(behaviour, "sft", tmp_path / "stale")
    assert str(good.pk) not in exported_rollouts(done)
    assert done.manifest["provenance"]["rollouts_left_out"] == {"eval_stale": 1}
    evaluated(behaviour)  # the eval again, on the current reward
    again = export(behaviour, "kto", tmp_path / "fresh")
    assert again.manifest["provenance"]["rollouts_left_out"] == {}
    labels = {s["trajectory_id"]: s for s in again.manifest["sources"]}
    assert str(good.pk) in labels and again.rows == 6


def test_a_split_belongs_to_the_task_so_a_second_behaviour_inherits_it(people):
    first = behaviour_with(held_out=1, train=0)
    [held] = first.tasks.all()
    second = behaviour_with("read-before-edit", train=0)
    second.held_out_fraction = 0.0  # its own hash would put every task in train
    second.save(update_fields=["held_out_fraction"])
    [added] = behaviour_tasks_add(
        user=None, behaviour_id=second.pk, candidate_ids=[held.candidate_id]
    )
    assert added.split == BehaviourTask.Split.HELD_OUT
