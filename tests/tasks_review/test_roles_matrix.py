"""Every review-desk URL against every role: alice annotates, bob reviews, carol approves, dave
administers, eve has no role, and an anonymous visitor is sent to log in."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from groundwork.services import holds
from tasks_review.services import exports, reviews
from tasks_review.services.candidate_holds import CANDIDATES
from tests.tasks_review.factories import make_candidate

pytestmark = pytest.mark.django_db

PEOPLE = ("alice", "bob", "carol", "dave", "eve", None)
REVIEWERS = {"alice", "bob", "dave"}  # review_candidate
LEADS = {"bob", "dave"}  # adjudicate_candidate, export_dataset
AUDITORS = {"bob", "carol", "dave"}  # view_audit


@pytest.fixture
def world(people, settings, tmp_path):
    """A pending candidate, one held by alice, a dispute between two outside reviewers, and a
    finished export."""
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 2}
    settings.VAR_DIR = tmp_path
    pending = make_candidate()
    held = make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=held.pk)
    disputed = make_candidate()
    annotators = people.alice.groups.get()
    for name, decision, reason in (("frank", "accept", ""), ("grace", "reject", "duplicate")):
        user = User.objects.create_user(name)
        user.groups.add(annotators)
        reviews.review_submit(user=user, candidate_id=disputed.pk, decision=decision, reason=reason)
    export = exports.dataset_export_create(user=people.dave)
    exports.dataset_export_execute(export_id=export.pk)
    trial = pending.trials.first()
    return {
        "pending": pending.pk,
        "held": held.pk,
        "disputed": disputed.pk,
        "export": export.pk,
        "trial": trial.pk,
    }


# (method, url template, data, who gets through, status when through)
MATRIX = [
    ("get", "/review/", None, REVIEWERS, 200),
    ("post", "/review/next/", {}, REVIEWERS, 302),
    ("get", "/review/candidates/{pending}/", None, REVIEWERS, 200),
    ("post", "/review/candidates/{pending}/hold/", {}, REVIEWERS, 302),
    ("post", "/review/candidates/{pending}/decide/", {"decision": "accept"}, REVIEWERS, 302),
    ("post", "/review/candidates/{held}/release/", {}, {"alice", "bob", "dave"}, 302),
    ("get", "/review/candidates/{pending}/trials/{trial}/logs/", None, REVIEWERS, 200),
    ("post", "/review/candidates/{disputed}/adjudicate/", {"decision": "accept"}, LEADS, 302),
    ("get", "/review/disputes/", None, LEADS, 200),
    ("get", "/review/agreement/", None, AUDITORS, 200),
    ("get", "/review/audit/", None, AUDITORS, 200),
    ("get", "/review/exports/", None, LEADS, 200),
    ("post", "/review/exports/", {}, LEADS, 302),
    ("get", "/review/exports/{export}/", None, LEADS, 200),
    ("get", "/review/exports/{export}/manifest.json", None, LEADS, 200),
]


@pytest.mark.parametrize("who", PEOPLE, ids=lambda w: w or "anonymous")
@pytest.mark.parametrize(
    ("method", "url", "data", "allowed", "ok"),
    MATRIX,
    ids=[f"{m.upper()} {u}" for m, u, *_ in MATRIX],
)
def test_role_matrix(client, people, world, who, method, url, data, allowed, ok):
    if who:
        client.force_login(getattr(people, who))
    response = getattr(client, method)(url.format(**world), data)
    if who is None:
        expected = 302
        assert response.status_code == expected
        assert response["Location"].startswith("/accounts/login/")
    else:
        expected = ok if who in allowed else 403
        assert response.status_code == expected, response.content[:300]


def test_the_review_link_in_the_top_bar_follows_the_role(client, people, world):
    # an annotator lands on the queue; an approver, who cannot review, on the audit log
    for who, page, href in (
        ("alice", "/review/", "/review/"),
        ("carol", "/review/audit/", "/review/audit/"),
    ):
        client.force_login(getattr(people, who))
        html = client.get(page).content.decode()
        assert f'<a href="{href}" aria-current="page">Review</a>' in html


def test_the_desk_tabs_follow_the_role(client, people, world):
    client.force_login(people.alice)
    html = client.get("/review/").content.decode()
    assert ">Queue</a>" in html
    for tab in ("Disputes", "Agreement", "Audit log", "Exports"):
        assert f">{tab}</a>" not in html
    client.force_login(people.dave)
    html = client.get("/review/").content.decode()
    for tab in ("Queue", "Disputes", "Agreement", "Audit log", "Exports"):
        assert f">{tab}</a>" in html
