"""The agreement page: the statistics, and why one is n/a."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


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
