"""The one pager every paginated list includes: its links keep the filters, swap the results
region with HTMX under a real href, read Newer/Older on newest-first lists, and it is the only
pager markup in the templates."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings
from django.core.paginator import Paginator
from django.template.loader import render_to_string

PAGER = "partials/pager.html"


def page(number: int, count: int = 120):
    return Paginator(range(count), 50).page(number)


def links(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<a href="([^"]*)"[^>]*>([^<]*)</a>', html)


def test_a_middle_page_links_both_ways_keeping_the_filters_and_swapping_the_results():
    html = render_to_string(
        PAGER, {"page": page(2), "query": "agent=x&q=y", "target": "queue-results"}
    )
    assert links(html) == [
        ("?agent=x&amp;q=y&page=1", "← Previous"),
        ("?agent=x&amp;q=y&page=3", "Next →"),
    ]
    assert html.count('hx-target="#queue-results"') == 2
    assert 'hx-get="?agent=x&amp;q=y&page=3"' in html
    assert "<span>Page 2 of 3</span>" in html


def test_without_a_target_the_links_are_plain_and_a_newest_first_list_reads_newer_and_older():
    html = render_to_string(PAGER, {"page": page(1), "newest_first": True, "noun": "events"})
    assert links(html) == [("?page=2", "Older →")]
    assert "hx-get" not in html
    assert "Page 1 of 3 · 120 events" in html


def test_a_single_page_shows_no_pager():
    assert render_to_string(PAGER, {"page": page(1, count=3)}).strip() == ""


def test_no_template_writes_a_pager_of_its_own():
    root = Path(settings.BASE_DIR) / "templates"
    own = [
        str(path.relative_to(root))
        for path in root.rglob("*.html")
        if 'class="pager"' in path.read_text() and path.relative_to(root).as_posix() != PAGER
    ]
    including = [p for p in root.rglob("*.html") if PAGER in p.read_text()]
    assert own == []
    assert len(including) >= 10
