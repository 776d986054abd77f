"""The audit trail: each write leaves an append-only event with who, what, and the state before and
after; a refused attempt is on record too."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from groundwork.access.errors import NotPermitted
from groundwork.models import AuditEvent
from groundwork.services.audit import audit_event_record, audit_type, require_audited

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(people) -> list[AuditEvent]:
    """alice and bob each did something to dave's account."""
    dave = people.dave
    return [
        audit_event_record(actor=people.alice, verb="user.note", target=dave, before=None, after={})
        for _ in range(2)
    ] + [
        audit_event_record(
            actor=people.bob, verb="user.rename", target=dave, before={"n": 1}, after={"n": 2}
        )
    ]


def test_an_event_names_its_target_by_kind_and_id_and_keeps_before_and_after(people, history):
    event = history[-1]
    assert (event.actor, event.verb) == (people.bob, "user.rename")
    assert (event.target_type, event.target_id) == ("user", str(people.dave.pk))
    assert (event.before, event.after) == ({"n": 1}, {"n": 2})


def test_the_kind_of_a_target_is_its_class_name_in_snake_case():
    assert audit_type(User) == "user"
    assert audit_type(AuditEvent) == "audit_event"


def test_an_anonymous_actor_is_recorded_as_nobody(people):
    from django.contrib.auth.models import AnonymousUser

    event = audit_event_record(
        actor=AnonymousUser(), verb="user.seen", target=people.eve, before=None, after=None
    )
    assert event.actor is None


def test_a_refused_attempt_is_recorded_then_refused(people):
    with pytest.raises(NotPermitted, match="eve may not approve"):
        require_audited(
            people.eve,
            "training.approve_deployment",
            "approve",
            verb="deployment.approve",
            target=User,
            target_id=7,
        )
    event = AuditEvent.objects.get()
    assert (event.actor, event.verb, event.target_id) == (
        people.eve,
        "deployment.approve.refused",
        "7",
    )
    assert event.after == {
        "refused": "eve may not approve",
        "permission": "training.approve_deployment",
    }


def test_audit_events_cannot_be_changed_or_deleted(history):
    event = AuditEvent.objects.first()
    event.verb = "nothing.happened"
    with pytest.raises(PermissionError):
        event.save()
    with pytest.raises(PermissionError):
        event.delete()


def test_audit_events_cannot_be_changed_or_deleted_in_bulk_either(history):
    count = AuditEvent.objects.count()
    events = AuditEvent.objects.filter(verb="user.note")
    with pytest.raises(PermissionError):
        events.update(verb="forged")
    with pytest.raises(PermissionError):
        events.delete()
    with pytest.raises(PermissionError):
        AuditEvent.objects.all().delete()
    event = events.first()
    event.verb = "forged"
    with pytest.raises(PermissionError):
        AuditEvent.objects.bulk_update([event], ["verb"])
    assert AuditEvent.objects.count() == count
    assert not AuditEvent.objects.filter(verb="forged").exists()
