"""Reads behind the behaviour pages: counts that multiple versions do not inflate, the newest
run, a spec in words, and the kept tasks still free to join."""

from __future__ import annotations

import pytest

from tests.tasks_review.factories import make_candidate
from tests.training.factories import make_behaviour
from training.core.catalogue import catalogue
from training.core.spec import FORBIDDEN_NAMES
from training.selectors import behaviours as reads
from training.services.behaviours import behaviour_version_create
from training.services.evals import eval_run_create


def test_every_forbidden_action_of_the_core_has_words():
    assert set(reads.FORBIDDEN_TITLES) == set(FORBIDDEN_NAMES)


@pytest.mark.django_db
def test_rows_count_tasks_by_split_once_whatever_the_versions_and_show_the_newest_run(people):
    behaviour = make_behaviour(tasks=4)
    for threshold in (0.5, 0.75):
        spec = {**behaviour.latest_version().spec, "pass_threshold": threshold}
        behaviour_version_create(user=people.bob, behaviour_id=behaviour.pk, spec=spec)
    eval_run_create(user=people.bob, behaviour_id=behaviour.pk, version_number=1)
    newest = eval_run_create(user=people.bob, behaviour_id=behaviour.pk)
    make_behaviour("read-before-edit")
    rows = {row.behaviour.slug: row for row in reads.behaviour_rows()}
    row = rows["failing-test-repair"]
    assert row.latest_number == 3 and row.train + row.held_out == 4
    assert row.train == behaviour.tasks.filter(split="train").count()
    assert row.last_run == newest and row.last_run.version.number == 3
    assert rows["read-before-edit"].last_run is None
    assert reads.catalogue_missing() == sorted(
        set(catalogue()) - {"failing-test-repair", "read-before-edit"}
    )


@pytest.mark.django_db
def test_a_spec_in_words_keeps_the_order_and_names_every_matcher():
    behaviour = make_behaviour()
    view = reads.spec_view(behaviour.latest_version())
    assert [a.label for a in view.actions] == ["edit the code", "run the tests, passing"]
    assert view.actions[0].matchers == (("path", "**"),)
    assert dict(view.actions[1].matchers) == {"check": "test", "outcome": "passed"}
    assert [e.kind for e in view.evidence] == ["check_passed", "verified_reward"]
    assert [f.kind for f in view.forbidden] == [
        "tamper_with_tests",
        "pipe_download_to_shell",
        "delete_outside_project",
    ]
    assert view.forbidden[0].label == "Editing or deleting the task's tests"
    assert view.order_required and view.pass_threshold == 1.0
    assert view.raw.startswith('{\n  "slug": "failing-test-repair"')


@pytest.mark.django_db
def test_choosable_tasks_are_kept_not_yet_chosen_and_found_by_name_or_number():
    behaviour = make_behaviour(tasks=1)
    chosen = behaviour.tasks.get().candidate
    free = make_candidate(trials=False, task_name="repair-csv")
    make_candidate(trials=False, task_name="repair-csv-old", status="dropped")
    rows, count = reads.choosable_tasks(behaviour)
    assert rows == [free] and count == 1 and chosen not in rows
    assert reads.choosable_tasks(behaviour, "CSV")[0] == [free]
    assert reads.choosable_tasks(behaviour, f"#{free.pk}")[0] == [free]
    assert reads.choosable_tasks(behaviour, "nothing like it") == ([], 0)
