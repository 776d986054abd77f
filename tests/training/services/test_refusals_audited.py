"""Refused actions leave an audit row: an approval, a kill or another deployment operation, a
review decision, an adjudication or a behaviour decision tried by someone without the role is
recorded as "<verb>.refused" on its target, with who tried and why it was refused."""

from __future__ import annotations

import pytest

from groundwork.access.errors import NotPermitted
from groundwork.models import AuditEvent
from tasks_review.services import reviews
from tests.tasks_review.factories import make_candidate
from tests.training.factories import make_behaviour
from tests.training.factories.deploy import gated_world, live, next_version, proposed
from training.services import deploy
from training.services.decisions import decision_record

pytestmark = pytest.mark.django_db


def refusal(verb: str) -> AuditEvent:
    return AuditEvent.objects.get(verb=f"{verb}.refused")


def test_a_refused_approval_and_kill_leave_audit_rows(people):
    world = gated_world(people.bob)
    d = proposed(world.adapter, people.bob)
    with pytest.raises(NotPermitted):
        deploy.deployment_approve(user=people.eve, deployment_id=d.pk)
    event = refusal("deployment.approve")
    assert (event.actor, event.target_type, event.target_id) == (
        people.eve,
        "deployment",
        str(d.pk),
    )
    assert "eve may not approve deployments" in event.after["refused"]
    served = live(next_version(world, people.bob, "2.0"), people.bob, people.carol)
    for operation in (
        lambda: deploy.deployment_kill(user=people.alice, deployment_id=served.pk, reason="x"),
        lambda: deploy.deployment_retire(user=people.alice, deployment_id=served.pk, reason="x"),
        lambda: deploy.deployment_activate(user=people.alice, deployment_id=served.pk),
    ):
        with pytest.raises(NotPermitted):
            operation()
    for verb in ("deployment.kill", "deployment.retire", "deployment.activate"):
        assert refusal(verb).actor == people.alice


def test_a_refused_review_decision_and_adjudication_leave_audit_rows(people):
    candidate = make_candidate()
    with pytest.raises(NotPermitted):
        reviews.review_submit(user=people.eve, candidate_id=candidate.pk, decision="accept")
    with pytest.raises(NotPermitted):
        reviews.review_adjudicate(user=people.eve, candidate_id=candidate.pk, decision="accept")
    for verb in ("review.submit", "review.override"):
        event = refusal(verb)
        assert (event.actor, event.target_type, event.target_id) == (
            people.eve,
            "candidate",
            str(candidate.pk),
        )


def test_a_refused_behaviour_decision_leaves_an_audit_row(people):
    behaviour = make_behaviour()
    with pytest.raises(NotPermitted):
        decision_record(user=people.eve, behaviour_id=behaviour.pk, kind="prompt", rationale="r")
    assert refusal("behaviour.decide").target_id == str(behaviour.pk)
