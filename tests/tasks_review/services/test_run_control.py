"""Cancel, re-run and retry of a pipeline run: the role is checked inside the service and each
action leaves an audit row."""

from __future__ import annotations

import pytest

from groundwork.access.errors import Conflict, NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import Candidate, PipelineRun
from tasks_review.services.run_control import (
    pipeline_run_cancel,
    pipeline_run_rerun,
    pipeline_run_retry_ungraded,
)
from tests.tasks_review.factories import make_candidate, make_run

pytestmark = pytest.mark.django_db


def test_no_one_without_the_run_role_cancels_reruns_or_retries_even_from_a_script(people):
    queued, done = make_run(), PipelineRun.objects.create(config={}, destination="x", status="done")
    for user in (people.alice, people.carol, people.eve):
        with pytest.raises(NotPermitted):
            pipeline_run_cancel(run_id=queued.id, user=user)
        with pytest.raises(NotPermitted):
            pipeline_run_rerun(run_id=done.id, user=user)
        with pytest.raises(NotPermitted):
            pipeline_run_retry_ungraded(run_id=done.id, user=user)
    queued.refresh_from_db()
    assert queued.status == "queued" and not queued.cancel_requested
    assert PipelineRun.objects.count() == 2 and not AuditEvent.objects.exists()


def test_a_cancel_is_audited_with_the_state_before_and_after(people):
    run = make_run()
    pipeline_run_cancel(run_id=run.id, user=people.bob)
    event = AuditEvent.objects.get(verb="pipeline_run.cancel")
    assert (event.actor, event.target_type, event.target_id) == (
        people.bob,
        "pipeline_run",
        str(run.id),
    )
    assert event.before == {"status": "queued", "cancel_requested": False}
    assert event.after == {"status": "cancelled", "cancel_requested": True}
    with pytest.raises(Conflict):
        pipeline_run_cancel(run_id=run.id, user=people.bob)
    assert AuditEvent.objects.filter(verb="pipeline_run.cancel").count() == 1


def test_a_rerun_is_audited_on_the_new_run_naming_the_old_one(people):
    old = PipelineRun.objects.create(config={"a": 1}, destination="x", status="done")
    new = pipeline_run_rerun(run_id=old.id, user=people.dave)
    assert (new.config, new.created_by) == ({"a": 1}, people.dave)
    event = AuditEvent.objects.get(verb="pipeline_run.rerun")
    assert event.target_id == str(new.id) and event.after["rerun_of"] == old.id


def test_a_retry_is_audited_with_the_candidates_it_verifies_again(people):
    run = PipelineRun.objects.create(config={}, destination="x", status="done")
    ungraded = make_candidate(run=run, status=Candidate.Status.UNGRADED)
    make_candidate(run=run, status=Candidate.Status.KEPT)
    assert pipeline_run_retry_ungraded(run_id=run.id, user=people.bob) == [ungraded.id]
    assert AuditEvent.objects.get(verb="pipeline_run.retry").after == {"candidates": [ungraded.id]}
