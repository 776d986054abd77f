"""The desk settings page: an admin changes reviews per candidate and labels per pair in the
app; it counts at once; bad values are refused in words; nobody else may."""

from __future__ import annotations

import pytest

from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tasks_review.selectors.reviewable import reviews_needed
from tests.tasks_review.factories import make_candidate
from training.selectors.labels import labels_needed

pytestmark = pytest.mark.django_db


def test_an_admin_changes_reviews_per_candidate_and_the_queue_shows_it_at_once(
    client, people, settings
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 1}
    client.force_login(people.dave)
    html = client.get("/settings/").content.decode()
    assert "Reviews per candidate" in html and "Labels per preference pair" in html
    assert "the default is 1 (TRAJ2ENV_REVIEWS_PER_CANDIDATE)" in html
    response = client.post("/settings/", {"key": "REVIEWS_PER_CANDIDATE", "value": "2"})
    assert response.status_code == 302 and response["Location"] == "/settings/"
    assert reviews_needed() == 2
    page = client.get("/settings/").content.decode()
    assert "Reviews per candidate: now 2" in page and "set by dave on " in page
    assert "2 reviews per candidate" in client.get("/review/").content.decode()
    assert AuditEvent.objects.filter(verb="desk_setting.change", actor=people.dave).count() == 1


def test_lowering_labels_per_pair_on_the_page(client, people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    client.force_login(people.dave)
    client.post("/settings/", {"key": "LABELS_PER_PAIR", "value": "1"})
    assert labels_needed() == 1


@pytest.mark.parametrize("value", ["0", "11", "two", ""])
def test_a_bad_value_is_refused_in_words_and_changes_nothing(client, people, value):
    client.force_login(people.dave)
    response = client.post("/settings/", {"key": "REVIEWS_PER_CANDIDATE", "value": value})
    assert response.status_code == 422
    assert "Reviews per candidate must be a whole number from 1 to 10." in (
        response.content.decode()
    )
    assert not AuditEvent.objects.exists()


def test_an_unknown_key_is_refused(client, people):
    client.force_login(people.dave)
    response = client.post("/settings/", {"key": "SECRET_KEY", "value": "1"})
    assert response.status_code == 422 and "There is no such setting." in response.content.decode()


@pytest.mark.parametrize("name", ["alice", "bob", "carol", "eve"])
def test_only_an_admin_sees_or_changes_the_settings(client, people, name):
    client.force_login(getattr(people, name))
    assert client.get("/settings/").status_code == 403
    assert (
        client.post("/settings/", {"key": "REVIEWS_PER_CANDIDATE", "value": "3"}).status_code == 403
    )
    assert "Settings</a>" not in client.get("/review/").content.decode()


def test_the_review_nav_links_the_settings_for_an_admin(client, people):
    make_candidate(review_status=Candidate.ReviewStatus.PENDING)
    client.force_login(people.dave)
    html = client.get("/review/").content.decode()
    assert 'href="/settings/"' in html
