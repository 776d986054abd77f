"""The Content Security Policy: every page carries it, and no page needs it loosened: no inline
script without the request's nonce, no on*= event handler, no style attribute."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.tasks_review.factories import make_candidate
from tests.training.views.helpers import make_evaluated
from tests.trajectories.views.test_stepper import FIX, repair_story

HX = {"HTTP_HX_REQUEST": "true"}
SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[a-z][^>]*\sstyle\s*=", re.IGNORECASE)


@pytest.fixture
def as_admin(client, people):
    client.force_login(people.dave)
    return client


@pytest.fixture
def pages(people):
    """The main pages, with a trajectory, a candidate and an evaluated behaviour to show."""
    story = repair_story()
    candidate = make_candidate()
    evaluated = make_evaluated(people.bob)
    return [
        reverse("trajectories:list"),
        reverse("trajectories:detail", args=[story.pk]),
        reverse("trajectories:step", args=[story.pk, FIX]),
        reverse("runs:list"),
        reverse("review:queue"),
        f"/review/candidates/{candidate.pk}/",
        reverse("review:audit"),
        reverse("review:agreement"),
        reverse("training:behaviours"),
        reverse("training:behaviour", args=[evaluated.behaviour.slug]),
        reverse("training:eval", args=[evaluated.run.pk]),
        reverse("training:result", args=[evaluated.good_result.pk]),
        reverse("training:rollouts"),
        reverse("loop:decisions"),
        reverse("loop:labels"),
        reverse("loop:exports"),
        reverse("loop:plans"),
        reverse("deploy:deployments"),
        reverse("deploy:adapters"),
        reverse("deploy:serving"),
        reverse("deploy:api_clients"),
    ]


def assert_needs_no_loosening(html: str, nonce: str, url: str) -> None:
    for attributes in SCRIPT.findall(html):
        assert "src=" in attributes or f'nonce="{nonce}"' in attributes, (url, attributes)
    assert not HANDLER.search(html), (url, HANDLER.search(html))
    assert not STYLE_ATTRIBUTE.search(html), (url, STYLE_ATTRIBUTE.search(html))


def policy_nonce(response) -> str:
    match = re.search(r"'nonce-([^']+)'", response["Content-Security-Policy"])
    return match.group(1) if match else ""


def test_the_policy_allows_only_our_own_scripts_styles_images_and_connections(client, db):
    policy = client.get(reverse("login"))["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    for name in ("default-src", "style-src", "img-src", "connect-src"):
        assert directives[name] == "'self'", name
    assert directives["script-src"].startswith("'self' 'nonce-")
    assert "unsafe" not in policy


def test_the_login_page_carries_the_policy_and_needs_no_loosening(client, db):
    response = client.get(reverse("login"))
    assert_needs_no_loosening(response.content.decode(), policy_nonce(response), "login")


@pytest.mark.parametrize("headers", [{}, HX], ids=["page", "htmx"])
def test_every_main_page_carries_the_policy_and_needs_no_loosening(as_admin, pages, headers):
    for url in pages:
        response = as_admin.get(url, **headers)
        assert response.status_code == 200, url
        assert "Content-Security-Policy" in response, url
        assert_needs_no_loosening(response.content.decode(), policy_nonce(response), url)


def test_htmx_injects_no_styles_and_keeps_no_history_snapshots_to_re_parse(as_admin, db):
    html = as_admin.get(reverse("trajectories:list")).content.decode()
    assert '{"includeIndicatorStyles": false, "historyCacheSize": 0}' in html
