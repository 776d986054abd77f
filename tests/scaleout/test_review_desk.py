"""The review desk on PostgreSQL, where row locks are real: reviewers racing for one candidate,
decisions landing at once, and blind multi-review, each through the desk's own requests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections
from django.test import Client

from groundwork.models import AuditEvent
from tasks_review.models import Candidate, Review
from tests.tasks_review.factories import make_candidate

pytestmark = [pytest.mark.scaleout, pytest.mark.django_db(transaction=True)]
HX = {"HX-Request": "true"}


def at_once(*requests: Callable[[], Any]) -> list[Any]:
    """Run each request in a thread of its own, released together; their answers, in order."""
    start = threading.Barrier(len(requests))
    answers: list[Any] = [None] * len(requests)

    def run(i: int, request: Callable[[], Any]) -> None:
        try:
            start.wait()
            answers[i] = request()
        finally:
            connections.close_all()  # the thread's own connection

    threads = [threading.Thread(target=run, args=(i, r)) for i, r in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def desk(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_two_reviewers_holding_one_candidate_at_once_leave_one_holder(people):
    alice, bob = desk(people.alice), desk(people.dave)
    for _ in range(5):
        c = make_candidate()
        hold = f"/review/candidates/{c.pk}/hold/"
        answers = at_once(
            lambda url=hold: alice.post(url, headers=HX),
            lambda url=hold: bob.post(url, headers=HX),
        )
        assert [a.status_code for a in answers] == [200, 200]
        c.refresh_from_db()
        holder = c.held_by.username
        assert holder in ("alice", "dave")
        assert AuditEvent.objects.filter(verb="candidate.hold", target_id=str(c.pk)).count() == 1
        loser = answers[1] if holder == "alice" else answers[0]
        assert f"Held by <strong>{holder}</strong>" in loser.content.decode()


def test_two_decisions_at_once_record_one_and_refuse_the_other(people):
    alice, bob = desk(people.alice), desk(people.bob)
    for _ in range(5):
        c = make_candidate()
        decide = f"/review/candidates/{c.pk}/decide/"
        answers = at_once(
            lambda url=decide: alice.post(url, {"decision": "accept"}),
            lambda url=decide: bob.post(url, {"decision": "reject", "reason": "too_easy"}),
        )
        assert sorted(a.status_code for a in answers) == [302, 409]
        assert Review.objects.filter(candidate=c).count() == 1
        c.refresh_from_db()
        review = Review.objects.get(candidate=c)
        assert c.review_status == ("accepted" if review.decision == "accept" else "rejected")


def test_blind_reviews_stay_hidden_until_complete_even_when_the_last_two_land_at_once(
    people, settings
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 3}
    c = make_candidate()
    page = f"/review/candidates/{c.pk}/"
    alice, bob, dave = desk(people.alice), desk(people.bob), desk(people.dave)
    alice.post(f"{page}decide/", {"decision": "reject", "reason": "leaks_fix", "comment": "QTD"})

    before = bob.get(page).content.decode()
    assert "1 other review in — hidden until the candidate has all 3" in before
    assert "QTD" not in before and 'class="decision decision-reject"' not in before
    audit = bob.get(f"/review/audit/?target=candidate:{c.pk}").content.decode()
    assert "hidden until the candidate has all its reviews" in audit
    assert "QTD" not in audit and ">reject<" not in audit

    answers = at_once(
        lambda: bob.post(f"{page}decide/", {"decision": "accept"}),
        lambda: dave.post(f"{page}decide/", {"decision": "accept"}),
    )
    assert [a.status_code for a in answers] == [302, 302]
    assert Review.objects.filter(candidate=c).count() == 3
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.DISPUTED  # two accepts, one reject
    after = bob.get(page).content.decode()
    assert "QTD" in after and "hidden until" not in after
