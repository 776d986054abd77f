"""`manage.py behaviour_tasks add|remove`: a behaviour's tasks chosen from
the terminal, as a named user, through the page's service; exit 0 done, 1 nothing new or
refused, 2 a usage error."""

from __future__ import annotations

import pytest

from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tests.tasks_review.factories import make_candidate
from tests.training.factories import make_behaviour
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of

pytestmark = pytest.mark.django_db


def test_adding_by_id_name_or_family_gives_each_its_split_and_says_so(manage, people):
    behaviour = make_behaviour()
    by_id, by_name = make_candidate(trials=False), make_candidate(trials=False)
    Candidate.objects.filter(pk=by_name.pk).update(task_name="invoice-total")
    ran = manage(
        "behaviour_tasks", "add", behaviour.slug, str(by_id.pk), "invoice-total",
        "--as", "bob", "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    added = ran.json["added"]
    assert [a["candidate"] for a in added] == sorted([by_id.pk, by_name.pk])
    splits = dict(behaviour.tasks.values_list("candidate_id", "split"))
    assert {a["candidate"]: a["split"] for a in added} == splits
    assert sum(ran.json["tasks"].values()) == 2
    assert AuditEvent.objects.get(verb="behaviour.tasks").actor == people.bob
    other = make_candidate(trials=False)
    Candidate.objects.filter(pk=other.pk).update(family="build")
    ran = manage("behaviour_tasks", "add", behaviour.slug, "--family", "build")
    assert ran.code == 0 and ran.out.startswith(f"{behaviour.slug}: added 1 task(s)")


def test_adding_nothing_new_exits_1_and_says_why(manage, people):
    behaviour = make_behaviour()
    candidate = make_candidate(trials=False)
    assert manage("behaviour_tasks", "add", behaviour.slug, str(candidate.pk)).code == 0
    ran = manage("behaviour_tasks", "add", behaviour.slug, str(candidate.pk))
    assert ran.code == 1 and f"it is already a task of {behaviour.slug}" in ran.err
    ran = manage("behaviour_tasks", "add", behaviour.slug, "--family", "qa", "--json")
    assert ran.code == 1 and ran.json["added"] == []
    assert "no kept task of the family 'qa'" in ran.err


def test_an_annotator_is_refused_with_exit_1_as_on_the_page(manage, people):
    behaviour = make_behaviour()
    candidate = make_candidate(trials=False)
    ran = manage("behaviour_tasks", "add", behaviour.slug, str(candidate.pk), "--as", "alice")
    assert ran.code == 1 and "choose a behaviour's tasks" in ran.err
    assert not behaviour.tasks.exists()


def test_usage_errors_exit_2_naming_what_is_wrong(manage, people):
    behaviour = make_behaviour()
    written = make_candidate(trials=False, status=Candidate.Status.WRITTEN)
    cases = [
        (("no-such", "1"), "no behaviour 'no-such' (known: failing-test-repair)"),
        ((behaviour.slug, "1", "--as", "nobody"), "no user 'nobody'"),
        ((behaviour.slug, "no-such-task"), "no kept task named 'no-such-task'"),
        ((behaviour.slug, str(written.pk)), "is not a kept task"),
        ((behaviour.slug,), "name the tasks to add"),
    ]
    for args, message in cases:
        ran = manage("behaviour_tasks", "add", *args, "--json")
        assert ran.code == 2 and message in ran.json["error"] and message in ran.err, args


def test_removing_tasks_exits_0_and_writes_the_audit_row(manage, people):
    behaviour = make_behaviour()
    keep, drop = make_candidate(trials=False), make_candidate(trials=False)
    manage("behaviour_tasks", "add", behaviour.slug, str(keep.pk), str(drop.pk))
    ran = manage("behaviour_tasks", "remove", behaviour.slug, str(drop.pk), "--as", "bob", "--json")
    assert ran.code == 0, ran.err
    assert [r["candidate"] for r in ran.json["removed"]] == [drop.pk]
    assert list(behaviour.tasks.values_list("candidate_id", flat=True)) == [keep.pk]
    event = AuditEvent.objects.get(verb="behaviour.tasks_remove")
    assert event.actor == people.bob and list(event.after["removed"]) == [str(drop.pk)]


def test_removing_a_task_with_results_exits_1_and_one_not_the_behaviours_exits_2(manage, people):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    pass_and_fail(task)
    evaluated(behaviour)
    ran = manage("behaviour_tasks", "remove", behaviour.slug, str(task.candidate_id))
    assert ran.code == 1 and "eval results or preference pairs" in ran.err
    stranger = make_candidate(trials=False)
    ran = manage("behaviour_tasks", "remove", behaviour.slug, str(stranger.pk))
    assert ran.code == 2 and f"is not a task of {behaviour.slug}" in ran.err
    assert behaviour.tasks.count() == 1


def test_remove_needs_the_tasks_named_and_takes_no_family(manage, people):
    behaviour = make_behaviour()
    ran = manage("behaviour_tasks", "remove", behaviour.slug)
    assert ran.code == 2 and "name the tasks to remove" in ran.err
    ran = manage("behaviour_tasks", "remove", behaviour.slug, "1", "--family", "repair")
    assert ran.code == 2 and "--family adds tasks" in ran.err


def test_an_inactive_user_may_not_act(manage, people):
    behaviour = make_behaviour()
    candidate = make_candidate(trials=False)
    people.bob.is_active = False
    people.bob.save()
    ran = manage("behaviour_tasks", "add", behaviour.slug, str(candidate.pk), "--as", "bob")
    assert ran.code == 1 and "bob is inactive and may not act" in ran.err
    assert not behaviour.tasks.exists()
