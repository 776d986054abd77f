import pytest
from django.urls import reverse

from tests.trajectories.factories import make_trajectory

pytestmark = pytest.mark.django_db
URL = reverse("trajectories:list")


def test_every_page_needs_login(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_user_without_a_role_sees_nothing(client, people):
    make_trajectory(title="secret work")
    client.force_login(people.eve)
    response = client.get(URL)
    assert response.status_code == 403
    assert b"secret work" not in response.content


@pytest.mark.parametrize("who", ["alice", "bob", "carol", "dave"])
def test_every_role_can_browse_trajectories(client, people, who):
    make_trajectory(title="Add retry to the uploader")
    client.force_login(getattr(people, who))
    response = client.get(URL)
    assert response.status_code == 200
    assert b"Add retry to the uploader" in response.content


def test_list_shows_format_agent_model_steps_tokens_cost_and_status(as_annotator):
    make_trajectory(
        title="t1",
        format="codex",
        agent_name="codex",
        model_name="gpt-5-codex",
        prompt_tokens=1500,
        completion_tokens=500,
        cost_usd=1.25,
        blocked=True,
    )
    body = as_annotator.get(URL).content.decode()
    for text in ("Codex", "gpt-5-codex", "2000", "$1.25", "blocked", "Ingested"):
        assert text in body


def test_search_matches_title_session_and_model(as_annotator):
    make_trajectory(title="Refactor the parser")
    make_trajectory(title="Something else", session_id="abc-parser-77")
    make_trajectory(title="Unrelated")
    body = as_annotator.get(URL, {"q": "parser"}).content.decode()
    assert "Refactor the parser" in body and "Something else" in body
    assert "Unrelated" not in body


def test_filters_narrow_by_format_and_blocked(as_annotator):
    make_trajectory(title="pi one", format="pi", agent_name="pi")
    make_trajectory(title="codex blocked", format="codex", blocked=True)
    make_trajectory(title="codex clean", format="codex")
    body = as_annotator.get(URL, {"format": "codex", "blocked": "no"}).content.decode()
    assert "codex clean" in body
    assert "codex blocked" not in body and "pi one" not in body


def test_unknown_filter_values_are_ignored_not_errors(as_annotator):
    make_trajectory(title="kept")
    response = as_annotator.get(URL, {"format": "<script>", "status": "nope", "page": "999"})
    assert response.status_code == 200
    assert b"kept" in response.content


def test_htmx_filter_request_gets_only_the_results_fragment(as_annotator):
    make_trajectory(title="fragment row")
    full = as_annotator.get(URL)
    fragment = as_annotator.get(
        URL, headers={"HX-Request": "true", "HX-Target": "trajectory-results"}
    )
    assert b"<html" in full.content
    assert b"<html" not in fragment.content
    assert b'id="trajectory-results"' in fragment.content
    assert b"fragment row" in fragment.content


def test_list_paginates_fifty_a_page(as_annotator):
    for _ in range(51):
        make_trajectory()
    first = as_annotator.get(URL).content.decode()
    assert "Page 1 of 2" in first
    assert first.count('id="trajectory-') == 50 + 1  # 50 rows and the results container


def test_titles_from_trajectories_are_escaped(as_annotator):
    make_trajectory(title="<script>alert(1)</script>")
    body = as_annotator.get(URL).content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
