"""`manage.py pairs_build SLUG`: the labels page's Build from the terminal; exit 0 pairs added,
1 none new (with the reason) or refused, 2 a usage error."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from groundwork.models import AuditEvent
from tests.training.factories.deploy import rollouts
from tests.training.factories.loop import behaviour_with, pass_and_fail, tasks_of
from training.models import PreferencePair

pytestmark = pytest.mark.django_db


def test_building_pairs_prints_them_and_a_second_build_exits_1_as_built_already(manage, people):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    good, bad = pass_and_fail(task)
    ran = manage("pairs_build", behaviour.slug, "--as", "bob", "--json")
    assert ran.code == 0, ran.err
    [pair] = PreferencePair.objects.all()
    assert ran.json == {
        "behaviour": behaviour.slug,
        "added": 1,
        "pairs": [{"pair": pair.pk, "task": task.candidate_id, "basis": pair.basis}],
        "total": 1,
    }
    assert {pair.rollout_a_id, pair.rollout_b_id} == {good.pk, bad.pk}
    assert AuditEvent.objects.get(verb="behaviour.pairs").actor == people.bob
    ran = manage("pairs_build", behaviour.slug)
    assert ran.code == 1
    assert "no new pairs: every pair of its 2 usable graded train rollout(s)" in ran.err


def test_rollouts_without_a_trajectory_are_named_as_the_reason_for_no_pairs(manage, people):
    behaviour = behaviour_with(train=1)
    candidates = [t.candidate for t in tasks_of(behaviour)]
    rollouts(candidates, "repaired", each=2)  # as `harbor run -a oracle` leaves them
    ran = manage("pairs_build", behaviour.slug, "--json")
    assert ran.code == 1 and ran.json["added"] == 0
    assert "0 graded rollout(s) with a trajectory" in ran.err
    assert "2 graded rollout(s) have no agent trajectory" in ran.err


def test_a_behaviour_without_train_tasks_says_so(manage, people):
    behaviour = behaviour_with(train=0, held_out=1)
    ran = manage("pairs_build", behaviour.slug)
    assert ran.code == 1 and "has no train task (held-out tasks get no pairs)" in ran.err


def test_an_annotator_is_refused_with_1_and_an_unknown_behaviour_is_2(manage, people):
    behaviour = behaviour_with(train=1)
    pass_and_fail(tasks_of(behaviour)[0])
    ran = manage("pairs_build", behaviour.slug, "--as", "alice")
    assert ran.code == 1 and "build preference pairs" in ran.err
    assert not PreferencePair.objects.exists()
    ran = manage("pairs_build", "no-such")
    assert ran.code == 2 and "no behaviour 'no-such'" in ran.err


def test_a_database_that_fails_exits_2_in_one_line_not_a_traceback_and_1(
    manage, people, monkeypatch
):
    behaviour = behaviour_with(train=1)

    def locked(**_):
        raise OperationalError("database is locked")

    monkeypatch.setattr("training.management.commands.pairs_build.pairs_build", locked)
    ran = manage("pairs_build", behaviour.slug, "--json")
    assert ran.code == 2
    assert ran.json == {
        "error": "unexpected error: database is locked (run again with --traceback to see where)"
    }
    assert "Traceback" not in ran.err


def test_a_bug_is_said_in_words_not_as_pythons_bare_exception_text(manage, people, monkeypatch):
    behaviour = behaviour_with(train=1)

    def broken(**_):
        raise KeyError("chosen")

    monkeypatch.setattr("training.management.commands.pairs_build.pairs_build", broken)
    ran = manage("pairs_build", behaviour.slug, "--json")
    assert ran.code == 2
    assert ran.json == {
        "error": "unexpected error: a required field is missing: 'chosen' (run again with "
        "--traceback to see where)"
    }
