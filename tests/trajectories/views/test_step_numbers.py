"""One step numbering on every page: the stepper's, 1-based. A page that says "step N" and links
to a step opens the stepper on "Step N"."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.tasks_review.factories import make_candidate
from tests.tasks_review.test_views_runs import make_run
from tests.trajectories.views.test_stepper import FAILING_CHECK, PASSING_CHECK, repair_story

pytestmark = pytest.mark.django_db

# An anchor to a step and the text inside it, up to the next tag's end.
LINK = re.compile(r'<a [^>]*href="(/trajectories/\d+/steps/(\d+)/)"[^>]*>(.*?)</a>', re.S)


def step_links(html: str) -> list[tuple[str, int, int]]:
    """(href, the step it opens, the number its text says) for each link naming a step."""
    found = []
    for href, index, text in LINK.findall(html):
        said = re.search(r"step (\d+)", re.sub(r"<[^>]+>", "", text))
        if said:
            found.append((href, int(index) + 1, int(said.group(1))))
    return found


def opens_on(client, href: str) -> int:
    html = client.get(href).content.decode()
    return int(re.search(r"<h1>Step (\d+) ", html).group(1))


@pytest.fixture
def candidate():
    story = repair_story()
    return make_candidate(
        run=make_run(), trajectory=story, fail_step=FAILING_CHECK, pass_step=PASSING_CHECK
    )


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(lambda c: reverse("runs:detail", args=[c.run_id]), id="run page"),
        pytest.param(lambda c: reverse("review:candidate", args=[c.pk]), id="desk"),
    ],
)
def test_a_step_a_page_names_is_the_step_its_link_opens(client, people, candidate, page):
    client.force_login(people.bob)
    links = step_links(client.get(page(candidate)).content.decode())
    assert len(links) == 2, links  # the failing check and the passing one
    for href, opened, said in links:
        assert said == opened, (href, said)
        assert opens_on(client, href) == said
    assert {said for _, _, said in links} == {FAILING_CHECK + 1, PASSING_CHECK + 1}


def test_the_trajectory_pages_check_steps_are_the_steppers(client, people, candidate):
    client.force_login(people.bob)
    html = client.get(reverse("trajectories:detail", args=[candidate.trajectory_id])).content
    row = r'<td><a href="(/trajectories/\d+/steps/(\d+)/)">(\d+)</a></td>'
    rows = re.findall(row, html.decode())
    assert rows
    for href, index, said in rows:
        assert int(said) == int(index) + 1 == opens_on(client, href)
