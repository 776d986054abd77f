"""Only tasks whose rewards are decided outside the graded process train and gate a behaviour,
unless it opts in to check-only tasks; exports say which kinds they used."""

from __future__ import annotations

import pytest
from django.urls import reverse

from groundwork.access.errors import NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.models import TrainingExport
from training.selectors.grading import grading_of
from training.services.behaviours import behaviour_check_only_set
from training.services.exports import training_export_create, training_export_execute

pytestmark = pytest.mark.django_db


@pytest.fixture
def behaviour(people):
    """Two train tasks, one of them check-only, each with a passing and a failing rollout."""
    behaviour = behaviour_with(train=2)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    check_only = tasks_of(behaviour)[1].candidate
    Candidate.objects.filter(pk=check_only.pk).update(grading=Candidate.Grading.CHECK_ONLY)
    evaluated(behaviour)
    return behaviour


def export(behaviour, tmp_path, name: str) -> TrainingExport:
    row = training_export_create(
        user=None, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / name
    )
    done = training_export_execute(export_id=row.pk)
    assert done is not None and done.status == TrainingExport.Status.DONE, done and done.refusal
    return done


def test_a_check_only_task_is_left_out_of_exports_and_the_manifest_says_so(behaviour, tmp_path):
    equivalence, check_only = tasks_of(behaviour)
    done = export(behaviour, tmp_path, "default")
    assert done.manifest["task_ids"] == [equivalence.candidate.task_name]
    assert done.manifest["grading"] == {
        "used": ["equivalence"],
        "check_only_opt_in": False,
        "left_out_check_only": 1,
    }


def test_a_behaviour_that_opts_in_exports_check_only_tasks_too_and_says_so(
    behaviour, people, tmp_path
):
    behaviour_check_only_set(user=people.bob, behaviour_id=behaviour.pk, allow=True)
    behaviour.refresh_from_db()
    done = export(behaviour, tmp_path, "opted-in")
    assert len(done.manifest["task_ids"]) == 2
    assert done.manifest["grading"]["used"] == ["check-only", "equivalence"]
    assert done.manifest["grading"]["check_only_opt_in"] is True
    event = AuditEvent.objects.get(verb="behaviour.check_only")
    assert (event.actor, event.before, event.after) == (
        people.bob,
        {"allow_check_only": False},
        {"allow_check_only": True},
    )


def test_only_an_editor_of_behaviours_opts_in(behaviour, people):
    for user in (people.alice, people.carol, people.eve):
        with pytest.raises(NotPermitted):
            behaviour_check_only_set(user=user, behaviour_id=behaviour.pk, allow=True)
    behaviour.refresh_from_db()
    assert not behaviour.allow_check_only


def test_a_task_kept_before_probes_existed_counts_as_check_only(behaviour):
    candidate = tasks_of(behaviour)[0].candidate
    candidate.grading = ""
    assert grading_of(candidate) == "check-only"


def test_the_behaviour_page_shows_each_task_s_grading_and_the_opt_in(behaviour, client, people):
    client.force_login(people.bob)
    page = client.get(reverse("training:behaviour", args=[behaviour.slug])).content.decode()
    assert "equivalence-graded" in page and "check-only, not used" in page
    response = client.post(reverse("training:check_only", args=[behaviour.slug]), {"allow": "1"})
    assert response.status_code == 302
    behaviour.refresh_from_db()
    assert behaviour.allow_check_only
    page = client.get(reverse("training:behaviour", args=[behaviour.slug])).content.decode()
    assert "Stop using check-only tasks" in page and "check-only, not used" not in page
