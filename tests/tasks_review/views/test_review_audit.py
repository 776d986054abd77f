"""The audit log page: every hold, decision, override and export is an event on it, and the
page filters, pages and never undoes blind review (the events themselves: tests/groundwork)."""

from __future__ import annotations

import re

import pytest

from groundwork.models import AuditEvent
from groundwork.services import holds
from tasks_review.services import reviews
from tasks_review.services.candidate_holds import CANDIDATES
from tests.tasks_review.factories import make_candidate

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true", "HX-Target": "audit-results"}


def shown(response) -> list[int]:
    return [int(n) for n in re.findall(r'<tr id="audit-(\d+)"', response.content.decode())]


@pytest.fixture
def history(people, settings):
    """alice holds and accepts c1, bob rejects c2 (two reviews needed: both pending)."""
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 2}
    c1, c2 = make_candidate(), make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=c1.pk)
    reviews.review_submit(user=people.alice, candidate_id=c1.pk, decision="accept")
    reviews.review_submit(
        user=people.bob, candidate_id=c2.pk, decision="reject", reason="duplicate"
    )
    return c1, c2


def test_the_audit_page_lists_who_did_what_with_before_and_after(people, client, history):
    client.force_login(people.carol)
    response = client.get("/review/audit/")
    assert response.status_code == 200
    html = response.content.decode()
    assert len(shown(response)) == AuditEvent.objects.count() == 3
    assert "candidate.hold" in html and "review.submit" in html
    c1, _ = history
    assert f'<a href="/review/candidates/{c1.pk}/">candidate #{c1.pk}</a>' in html
    assert '<tr class="kv-changed"><th>decision</th>' in html


def test_filter_by_actor_verb_and_target(people, client, history):
    c1, c2 = history
    client.force_login(people.dave)
    by_alice = shown(client.get("/review/audit/?actor=alice"))
    assert len(by_alice) == 2
    submits = shown(client.get("/review/audit/?verb=review.submit"))
    assert len(submits) == 2
    on_c2 = client.get(f"/review/audit/?target=candidate:{c2.pk}")
    assert shown(on_c2) == list(
        AuditEvent.objects.filter(target_id=str(c2.pk)).values_list("pk", flat=True)
    )
    assert len(shown(client.get(f"/review/audit/?target={c1.pk}"))) == 2
    assert len(shown(client.get("/review/audit/?target=candidate"))) == 3
    assert len(shown(client.get("/review/audit/?target=dataset_export"))) == 0


def test_the_results_are_a_fragment_under_htmx(people, client, history):
    client.force_login(people.bob)
    body = client.get("/review/audit/?actor=alice", headers=HX).content.decode().strip()
    assert body.startswith('<div id="audit-results">') and "<html" not in body
    assert "<html" in client.get("/review/audit/?actor=alice").content.decode()


def test_a_pending_decision_stays_hidden_in_the_audit_log(people, client, history):
    c1, c2 = history
    client.force_login(people.bob)  # bob has not reviewed c1, which is still pending
    html = client.get(f"/review/audit/?target=candidate:{c1.pk}&verb=review.submit").content
    assert "hidden until the candidate has all its reviews" in html.decode()
    assert '"accept"' not in html.decode() and ">accept<" not in html.decode()
    own = client.get(f"/review/audit/?target=candidate:{c2.pk}").content.decode()
    assert "hidden until" not in own  # his own decision
    client.force_login(people.carol)  # an approver cannot review: blind review does not bind her
    carol_sees = client.get(f"/review/audit/?target=candidate:{c1.pk}").content.decode()
    assert "hidden until" not in carol_sees and ">accept<" in carol_sees
    reviews.review_submit(user=people.dave, candidate_id=c1.pk, decision="accept")
    client.force_login(people.bob)  # decided now: no longer secret
    html = client.get(f"/review/audit/?target=candidate:{c1.pk}").content.decode()
    assert "hidden until" not in html


def test_having_reviewed_a_pending_candidate_does_not_unblind_the_others(
    people, client, history, settings
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 3}
    _, c2 = history  # bob rejected c2
    reviews.review_submit(user=people.dave, candidate_id=c2.pk, decision="accept")
    for who, theirs in ((people.bob, "accept"), (people.dave, "reject")):
        client.force_login(who)
        html = client.get(f"/review/audit/?target=candidate:{c2.pk}").content.decode()
        assert html.count("hidden until the candidate has all its reviews") == 1
        assert f">{theirs}<" not in html  # the other's decision


def test_the_audit_log_pages(people, client):
    for _ in range(3):
        c = make_candidate(trials=False)
        for _ in range(20):
            holds.hold(CANDIDATES, user=people.alice, row_id=c.pk)
            holds.release(CANDIDATES, user=people.alice, row_id=c.pk)
    client.force_login(people.bob)
    first = client.get("/review/audit/")
    assert len(shown(first)) == 50 and "Page 1 of 3" in first.content.decode()
    last = client.get("/review/audit/?page=3", headers=HX)
    assert len(shown(last)) == 20


def test_times_in_an_events_before_and_after_are_shown_to_the_second(people, client, history):
    client.force_login(people.bob)
    html = client.get("/review/audit/?verb=candidate.hold").content.decode()
    [until] = AuditEvent.objects.filter(verb="candidate.hold").values_list(
        "after__held_until", flat=True
    )
    assert re.search(r"\.\d{6}", until)  # stored as ISO 8601 with microseconds
    assert until not in html
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", html)
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", html)


def test_holds_written_before_the_rename_are_found_and_listed_as_holds(people, client, history):
    c1, _ = history
    # A row from before holds had one name: the append-only log keeps its verb.
    AuditEvent.objects.create(
        actor=people.bob, verb="candidate.reserve", target_type="candidate", target_id=str(c1.pk)
    )
    client.force_login(people.dave)
    for verb in ("candidate.hold", "candidate.reserve"):
        assert len(shown(client.get(f"/review/audit/?verb={verb}"))) == 2
    facets = client.get("/review/audit/").content.decode()
    assert ">candidate.hold</option>" in facets
    assert ">candidate.reserve</option>" not in facets
