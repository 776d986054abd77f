"""The candidate queue: what is reviewable, filters, sorting, counts, holds, and the
results fragment with and without HX-Request."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from groundwork.services import holds
from tasks_review.models import Candidate
from tasks_review.services.candidate_holds import CANDIDATES
from tests.tasks_review.factories import make_candidate, make_review
from tests.trajectories.factories import make_trajectory

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true", "HX-Target": "queue-results"}


def rows(response) -> list[int]:
    import re

    return [int(n) for n in re.findall(r'id="candidate-(\d+)-row"', response.content.decode())]


def test_only_kept_and_written_candidates_are_in_the_queue_with_their_status(as_annotator):
    kept = make_candidate(status=Candidate.Status.KEPT)
    written = make_candidate(status=Candidate.Status.WRITTEN)
    for status in ("proposed", "dropped", "verifying", "ungraded"):
        make_candidate(status=status)
    response = as_annotator.get("/review/")
    assert response.status_code == 200
    assert rows(response) == [kept.pk, written.pk]
    html = response.content.decode()
    assert '<span class="status status-kept">kept</span>' in html
    assert '<span class="status status-written">written</span>' in html


def test_the_queue_is_a_whole_page_and_its_results_a_fragment(as_annotator):
    make_candidate()
    page = as_annotator.get("/review/")
    assert page.content.decode().lstrip().startswith("<!doctype html>")
    assert page["Vary"] and "HX-Request" in page["Vary"]
    fragment = as_annotator.get("/review/", headers=HX)
    body = fragment.content.decode().strip()
    assert body.startswith('<section id="queue-results"') and "<html" not in body
    assert rows(fragment) == rows(page)


def test_what_a_reviewer_decided_leaves_their_to_review_tab(people, client):
    first, second = make_candidate(), make_candidate()
    make_review(first, people.alice, "accept")
    client.force_login(people.alice)
    assert rows(client.get("/review/")) == [second.pk]
    client.force_login(people.bob)  # bob has not reviewed it, but it is decided
    Candidate.objects.filter(pk=first.pk).update(review_status="accepted")
    assert rows(client.get("/review/")) == [second.pk]
    assert rows(client.get("/review/?review=accepted")) == [first.pk]
    assert rows(client.get("/review/?review=all")) == [first.pk, second.pk]


def test_filters_by_family_status_language_source_and_reviewer(people, client):
    client.force_login(people.bob)
    py = make_candidate(language="python", trajectory=make_trajectory(format="codex"))
    go = make_candidate(language="go", family="extend")
    written = make_candidate(status="written", trajectory=make_trajectory(format="pi"))
    make_review(go, people.alice, "reject", "duplicate")
    assert rows(client.get("/review/?language=go")) == [go.pk]
    assert rows(client.get("/review/?family=extend")) == [go.pk]
    assert rows(client.get("/review/?status=written")) == [written.pk]
    assert rows(client.get("/review/?source=codex")) == [py.pk]
    assert rows(client.get("/review/?reviewer=alice")) == [go.pk]
    assert rows(client.get("/review/?status=nonsense")) == [py.pk, go.pk, written.pk]


def test_review_status_tabs_count_under_the_other_filters(people, client):
    client.force_login(people.alice)
    make_candidate(language="go", review_status="accepted")
    make_candidate(language="go", review_status="disputed")
    make_candidate(language="go")
    make_candidate(language="python")
    counts = client.get("/review/?language=go").context["counts"]
    assert counts["todo"] == 1 and counts["pending"] == 1
    assert counts["accepted"] == 1 and counts["disputed"] == 1 and counts["all"] == 3
    assert client.get("/review/?review=disputed").context["page"].paginator.count == 1


def test_sorting(people, client):
    client.force_login(people.alice)
    a = make_candidate(language="rust")
    b = make_candidate(language="go")
    assert rows(client.get("/review/")) == [a.pk, b.pk]
    assert rows(client.get("/review/?sort=-id")) == [b.pk, a.pk]
    assert rows(client.get("/review/?sort=language")) == [b.pk, a.pk]
    make_review(a, people.bob, "accept")
    assert rows(client.get("/review/?sort=-reviews")) == [a.pk, b.pk]


def test_another_reviewers_hold_shows_in_the_queue(people, client):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.bob, row_id=c.pk)
    client.force_login(people.alice)
    html = client.get("/review/").content.decode()
    assert "bob · until" in html


def test_review_next_holds_and_opens_the_next_candidate(people, client):
    make_candidate(language="python")
    go = make_candidate(language="go")
    client.force_login(people.alice)
    response = client.post("/review/next/?language=go")
    assert response.status_code == 302
    assert response["Location"] == f"/review/candidates/{go.pk}/?language=go"
    go.refresh_from_db()
    assert go.held_by == people.alice


def test_review_next_with_nothing_left_says_so(people, client):
    client.force_login(people.alice)
    response = client.post("/review/next/")
    assert response["Location"] == "/review/?done=1"
    assert "Nothing is left for you" in client.get(response["Location"]).content.decode()


def test_review_next_with_everything_held_says_who_holds_what_until_when(people, client):
    first, second = make_candidate(), make_candidate()
    holds.hold(CANDIDATES, user=people.bob, row_id=first.pk)
    holds.hold(CANDIDATES, user=people.dave, row_id=second.pk)
    first.refresh_from_db()
    client.force_login(people.alice)
    response = client.post("/review/next/")
    html = client.get(response["Location"]).content.decode()
    until = timezone.localtime(first.held_until).strftime("%H:%M:%S")
    assert "2 candidates are held by others" in html
    assert f"#{first.pk} by bob until {until}" in html and f"#{second.pk} by dave" in html
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", html)  # no microseconds


def test_review_next_is_a_post(as_annotator):
    assert as_annotator.get("/review/next/").status_code == 405


def test_a_planted_title_is_escaped_in_the_queue(as_annotator):
    make_candidate(task_name="<script>alert(1)</script>")
    html = as_annotator.get("/review/").content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_the_queue_pages(as_annotator):
    for _ in range(51):
        make_candidate(trials=False, start={"a.py": b"x\n"}, fix={"a.py": b"y\n"})
    first = as_annotator.get("/review/")
    assert len(rows(first)) == 50 and "Page 1 of 2" in first.content.decode()
    assert len(rows(as_annotator.get("/review/?page=2", headers=HX))) == 1
