"""One way to answer a browser and HTMX from the same template: the page, or its fragment when
HTMX asks, always varying on HX-Request; a polled fragment whose job ended stops the polling."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from django_htmx.middleware import HtmxDetails

from project.htmx import render_fragment, render_page, wants_fragment

PAGE = (
    "<html><title>Page</title>"
    "{% partialdef part inline %}"
    '<p id="part">{% if fragment %}fragment{% else %}in page{% endif %}: {{ word }}</p>'
    "{% endpartialdef %}</html>"
)
ROW = '<tr id="row">{{ word }}{% if fragment %} (fragment){% endif %}</tr>'


@pytest.fixture(autouse=True)
def templates(settings):
    settings.TEMPLATES = [
        {
            "BACKEND": "django.template.backends.django.DjangoTemplates",
            "OPTIONS": {
                "loaders": [
                    ("django.template.loaders.locmem.Loader", {"page.html": PAGE, "row.html": ROW})
                ]
            },
        }
    ]


def get(**headers: str):
    request = RequestFactory().get("/", headers=headers)
    request.htmx = HtmxDetails(request)  # what HtmxMiddleware does
    return request


HX = {"HX-Request": "true"}


def test_a_browser_gets_the_whole_page_which_varies_on_hx_request():
    response = render_page(get(), "page.html", {"word": "hi"}, "part")
    assert response.status_code == 200
    assert (
        response.content.decode() == '<html><title>Page</title><p id="part">in page: hi</p></html>'
    )
    assert "HX-Request" in response["Vary"]


def test_htmx_gets_only_the_fragment_which_knows_it_is_one():
    response = render_page(get(**HX), "page.html", {"word": "hi"}, "part")
    assert response.content.decode() == '<p id="part">fragment: hi</p>'
    assert "HX-Request" in response["Vary"]


def test_a_history_restore_after_a_cache_miss_gets_the_whole_page():
    request = get(**HX, **{"HX-History-Restore-Request": "true"})
    assert not wants_fragment(request)
    response = render_page(request, "page.html", {"word": "hi"}, "part")
    assert response.content.decode().startswith("<html>")


def test_a_fragment_tied_to_a_target_is_only_for_requests_aimed_at_it():
    aimed = get(**HX, **{"HX-Target": "part"})
    elsewhere = get(**HX, **{"HX-Target": "sidebar"})
    assert wants_fragment(aimed, "part") and not wants_fragment(elsewhere, "part")
    assert render_page(aimed, "page.html", {}, "part", target="part").content.startswith(b"<p")
    whole = render_page(elsewhere, "page.html", {}, "part", target="part")
    assert whole.content.startswith(b"<html>") and "HX-Request" in whole["Vary"]


def test_a_page_without_a_fragment_is_whole_even_for_htmx():
    response = render_page(get(**HX), "page.html", {"word": "hi"})
    assert response.content.startswith(b"<html>") and "HX-Request" in response["Vary"]


def test_a_request_that_htmx_middleware_never_saw_wants_the_page():
    assert not wants_fragment(RequestFactory().get("/", headers=HX))


def test_the_status_is_kept_for_page_and_fragment():
    assert render_page(get(), "page.html", {}, "part", status=422).status_code == 422
    assert render_page(get(**HX), "page.html", {}, "part", status=409).status_code == 409


def test_a_polled_fragment_keeps_polling_until_its_job_ends_then_answers_286():
    running = render_fragment(get(**HX), "row.html", {"word": "running"})
    assert running.status_code == 200
    assert running.content.decode() == '<tr id="row">running (fragment)</tr>'
    done = render_fragment(get(**HX), "row.html", {"word": "done"}, stop_polling=True)
    assert done.status_code == 286 and done.reason_phrase == "Stop Polling"
    assert done.content.decode() == '<tr id="row">done (fragment)</tr>'  # still swapped in
    assert "HX-Request" in done["Vary"]


def test_a_partial_can_be_rendered_on_its_own_as_a_fragment():
    response = render_fragment(get(**HX), "page.html#part", {"word": "hi"})
    assert response.content.decode() == '<p id="part">fragment: hi</p>'
