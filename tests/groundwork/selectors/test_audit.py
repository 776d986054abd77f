"""The audit log's search: by actor, verb and target (a kind, a kind and id, or an id), newest
first; its facets list the verbs and actors there are."""

from __future__ import annotations

import pytest

from groundwork.selectors.audit import AuditFilters, audit_facets, audit_search
from groundwork.services.audit import audit_event_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def events(people):
    def record(actor, verb, target):
        return audit_event_record(actor=actor, verb=verb, target=target, before=None, after=None)

    return [
        record(people.alice, "user.note", people.dave),
        record(people.bob, "user.note", people.eve),
        record(people.bob, "group.rename", people.alice.groups.get()),
    ]


def found(**query: str) -> list[int]:
    return [e.pk for e in audit_search(AuditFilters.from_query(query))]


def test_everything_newest_first_without_filters(events):
    assert found() == [e.pk for e in reversed(events)]
    assert not AuditFilters.from_query({}).active


def test_filters_by_actor_verb_and_target(people, events):
    note_a, note_b, rename = events
    assert found(actor="bob") == [rename.pk, note_b.pk]
    assert found(verb="user.note") == [note_b.pk, note_a.pk]
    assert found(target="group") == [rename.pk]
    assert found(target=f"user:{people.eve.pk}") == [note_b.pk]
    assert found(target=str(people.dave.pk)) == [
        e.pk for e in reversed(events) if e.target_id == str(people.dave.pk)
    ]
    assert AuditFilters.from_query({"verb": " user.note "}).verb == "user.note"


def test_the_facets_are_the_verbs_and_actors_on_record(events):
    assert audit_facets() == {"verbs": ["group.rename", "user.note"], "actors": ["alice", "bob"]}
