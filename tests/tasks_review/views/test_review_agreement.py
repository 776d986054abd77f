"""The agreement page: the statistics, and why one is n/a."""

from __future__ import annotations

import re

import pytest

from tasks_review.services import reviews
from tests.tasks_review.factories import make_candidate

pytestmark = pytest.mark.django_db


def decision_count(html: str, decision: str) -> int:
    found = re.search(
        rf'class="decision decision-{decision}">[^<]*</span> <strong>(\d+)</strong>', html
    )
    assert found, html
    return int(found.group(1))


def test_the_agreement_page_shows_the_numbers(client, people, reviewed):
    client.force_login(people.bob)
    html = client.get("/review/agreement/").content.decode()
    assert '<p class="stat-value">0.333</p>' in html
    assert "0.400" in html and "0.333" in html
    assert "both used a single category" in html


def test_the_agreement_page_says_why_alpha_is_n_a(client, people):
    client.force_login(people.carol)
    html = client.get("/review/agreement/").content.decode()
    assert '<p class="stat-value na">n/a</p>' in html
    assert "No candidate has two or more reviews." in html


def test_a_pending_candidates_decisions_stay_off_the_page_for_reviewers(
    client, people, two_reviews
):
    """bob may not learn alice's pending reject from the counts; carol, who cannot review, may."""
    c = make_candidate(trials=False)
    reviews.review_submit(
        user=people.alice,
        candidate_id=c.pk,
        decision="reject",
        reason="other",
        comment="quotes the diff",
    )
    client.force_login(people.bob)
    html = client.get("/review/agreement/").content.decode()
    assert decision_count(html, "reject") == 0 and "pending ones stay blind" in html
    client.force_login(people.carol)
    assert decision_count(client.get("/review/agreement/").content.decode(), "reject") == 1
    reviews.review_submit(
        user=people.dave, candidate_id=c.pk, decision="reject", reason="other", comment="agreed"
    )
    client.force_login(people.bob)  # complete now: no longer secret
    assert decision_count(client.get("/review/agreement/").content.decode(), "reject") == 2
