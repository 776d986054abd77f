"""Behaviours: a spec validated on the way in, a new version on every edit, tasks split once."""

from __future__ import annotations

import pytest

from groundwork.access.errors import Conflict, Invalid, NotFound, NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tests.tasks_review.factories import make_candidate
from tests.training.factories import make_behaviour
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.core.catalogue import catalogue
from training.core.stats import split_of
from training.models import Behaviour, BehaviourTask, BehaviourVersion
from training.services.behaviours import (
    behaviour_catalogue_seed,
    behaviour_create,
    behaviour_tasks_add,
    behaviour_tasks_remove,
    behaviour_version_create,
)

pytestmark = pytest.mark.django_db

SPEC = {
    "slug": "focused-check",
    "title": "Run a focused check",
    "expected_actions": [{"kind": "shell", "check": "test"}],
}


def test_a_behaviour_starts_at_version_1_with_its_spec_and_an_audit_event(people):
    behaviour = behaviour_create(user=people.bob, spec=SPEC)
    version = behaviour.latest_version()
    assert (behaviour.slug, behaviour.title, version.number) == ("focused-check", SPEC["title"], 1)
    assert version.spec["expected_actions"][0]["check"] == "test"
    assert AuditEvent.objects.filter(verb="behaviour.create", target_type="behaviour").count() == 1


def test_a_spec_with_no_expectations_is_refused_with_the_reason(people):
    with pytest.raises(Invalid, match="no expected_actions, no evidence and no forbidden"):
        behaviour_create(user=people.bob, spec={"slug": "empty", "title": "Nothing"})
    assert not Behaviour.objects.exists()


def test_a_spec_the_schema_refuses_names_the_json_path(people):
    bad = {**SPEC, "expected_actions": [{"kind": "shell", "command": "("}]}
    with pytest.raises(Invalid, match=r"\$\.expected_actions\[0\]\.command"):
        behaviour_create(user=people.bob, spec=bad)


def test_an_annotator_may_not_add_behaviours(people):
    with pytest.raises(NotPermitted):
        behaviour_create(user=people.alice, spec=SPEC)


def test_editing_makes_the_next_version_and_keeps_the_old_one_as_it_was(people):
    behaviour = behaviour_create(user=people.bob, spec=SPEC)
    edited = {**SPEC, "title": "Run a focused test", "pass_threshold": 0.5}
    v2 = behaviour_version_create(user=people.bob, behaviour_id=behaviour.pk, spec=edited)
    v1 = behaviour.versions.get(number=1)
    assert v2.number == 2 and v2.spec["pass_threshold"] == 0.5
    assert "pass_threshold" not in v1.spec or v1.spec["pass_threshold"] == 1
    behaviour.refresh_from_db()
    assert behaviour.title == "Run a focused test"
    with pytest.raises(PermissionError):
        v1.save()


def test_an_edit_that_changes_nothing_or_renames_is_refused(people):
    behaviour = behaviour_create(user=people.bob, spec=SPEC)
    with pytest.raises(Conflict, match="nothing changed"):
        behaviour_version_create(user=people.bob, behaviour_id=behaviour.pk, spec=SPEC)
    with pytest.raises(Invalid, match="keeps its name"):
        behaviour_version_create(
            user=people.bob, behaviour_id=behaviour.pk, spec={**SPEC, "slug": "other"}
        )
    assert BehaviourVersion.objects.count() == 1


def test_seeding_the_catalogue_adds_each_behaviour_once_and_keeps_edits(people):
    added = behaviour_catalogue_seed()
    assert {b.slug for b in added} == set(catalogue())
    assert len(added) >= 6
    repair = Behaviour.objects.get(slug="failing-test-repair")
    spec = {**repair.latest_version().spec, "title": "Repair, edited"}
    behaviour_version_create(user=people.bob, behaviour_id=repair.pk, spec=spec)
    assert behaviour_catalogue_seed() == []
    assert repair.versions.count() == 2


def test_tasks_get_their_split_once_from_a_stable_hash(people):
    behaviour = make_behaviour()
    candidates = [make_candidate(trials=False) for _ in range(12)]
    rows = behaviour_tasks_add(
        user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[c.pk for c in candidates]
    )
    assert len(rows) == 12
    for row in BehaviourTask.objects.filter(behaviour=behaviour):
        assert row.split == split_of(row.candidate.key, behaviour.slug, behaviour.held_out_fraction)
    # Adding again changes nothing; a split never moves.
    again = behaviour_tasks_add(
        user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[c.pk for c in candidates]
    )
    assert again == []
    row = BehaviourTask.objects.filter(behaviour=behaviour).first()
    row.split = "train" if row.split == "held_out" else "held_out"
    with pytest.raises(PermissionError, match="never moves"):
        row.save()


def test_removing_tasks_deletes_them_with_one_audit_row_naming_each_and_its_split(people):
    behaviour = make_behaviour()
    candidates = [make_candidate(trials=False) for _ in range(3)]
    ids = [c.pk for c in candidates]
    added = behaviour_tasks_add(user=people.bob, behaviour_id=behaviour.pk, candidate_ids=ids)
    splits = {str(t.candidate_id): t.split for t in added}
    removed = behaviour_tasks_remove(
        user=people.bob, behaviour_id=behaviour.pk, candidate_ids=ids[:2]
    )
    assert sorted(t.candidate_id for t in removed) == ids[:2]
    assert list(behaviour.tasks.values_list("candidate_id", flat=True)) == ids[2:]
    event = AuditEvent.objects.get(verb="behaviour.tasks_remove")
    assert event.actor == people.bob and event.target_id == str(behaviour.pk)
    assert event.after == {"removed": {k: splits[k] for k in map(str, ids[:2])}}


def test_removing_a_task_that_is_not_the_behaviours_is_refused_and_removes_nothing(people):
    behaviour = make_behaviour()
    mine, other = make_candidate(trials=False), make_candidate(trials=False)
    behaviour_tasks_add(user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[mine.pk])
    with pytest.raises(NotFound, match=f"candidate {other.pk} is not a task of"):
        behaviour_tasks_remove(
            user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[mine.pk, other.pk]
        )
    assert behaviour.tasks.count() == 1
    assert not AuditEvent.objects.filter(verb="behaviour.tasks_remove").exists()


def test_a_task_with_eval_results_or_pairs_is_kept_since_they_are_the_record(people):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    pass_and_fail(task)
    evaluated(behaviour)
    with pytest.raises(Conflict, match="1 task has eval results or preference pairs"):
        behaviour_tasks_remove(
            user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[task.candidate_id]
        )
    assert behaviour.tasks.count() == 1


def test_an_annotator_may_not_remove_tasks(people):
    behaviour = make_behaviour()
    candidate = make_candidate(trials=False)
    behaviour_tasks_add(user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[candidate.pk])
    with pytest.raises(NotPermitted):
        behaviour_tasks_remove(
            user=people.alice, behaviour_id=behaviour.pk, candidate_ids=[candidate.pk]
        )


def test_only_kept_tasks_can_serve_a_behaviour(people):
    behaviour = make_behaviour()
    written = make_candidate(trials=False, status=Candidate.Status.WRITTEN)
    with pytest.raises(Invalid, match="not a kept task"):
        behaviour_tasks_add(user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[written.pk])
    with pytest.raises(NotFound):
        behaviour_tasks_add(user=people.bob, behaviour_id=behaviour.pk, candidate_ids=[999999])
    assert not BehaviourTask.objects.exists()


def test_a_200_kb_title_is_refused_with_a_short_quote_of_it(people):
    with pytest.raises(Invalid) as refused:
        behaviour_create(user=people.bob, spec={**SPEC, "title": "t" * 204_800})
    said = str(refused.value)
    assert "$.title:" in said and "(204,800 characters) is too long" in said
    assert len(said) < 300
    assert not Behaviour.objects.exists()


def test_a_200_kb_note_on_an_edit_is_refused(people):
    behaviour = behaviour_create(user=people.bob, spec=SPEC)
    edited = {**SPEC, "title": "Run one focused check"}
    with pytest.raises(Invalid, match="note is 204,800 characters long; at most 200"):
        behaviour_version_create(
            user=people.bob, behaviour_id=behaviour.pk, spec=edited, note="n" * 204_800
        )
    assert behaviour.versions.count() == 1


def test_a_note_holding_a_nul_character_is_refused(people):
    behaviour = behaviour_create(user=people.bob, spec=SPEC)
    edited = {**SPEC, "title": "Run one focused check"}
    with pytest.raises(Invalid, match="note holds a NUL character"):
        behaviour_version_create(
            user=people.bob, behaviour_id=behaviour.pk, spec=edited, note="n\x00"
        )
    assert behaviour.versions.count() == 1
