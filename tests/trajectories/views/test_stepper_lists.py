"""The stepper's long lists: the file tree and a step's tool calls show their first rows, and a
"show more" answers the next ones (a fragment under HTMX, a page of its own otherwise)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.trajectories.factories import make_trajectory
from tests.trajectories.test_replay_reads import stored
from trajectories.core.replay.synthetic import AtifBuilder
from trajectories.display import FIELD_CHARS, LIST_ITEMS, TREE_ROWS
from trajectories.models import Trajectory

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
FILES = TREE_ROWS * 2 + 100


def get(client, path: str, **headers) -> str:
    response = client.get(path, **headers)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def more_link(body: str, name: str) -> str | None:
    """The "show more" link of the list `name` (tree or calls) in `body`, unescaped."""
    found = re.search(rf'hx-get="([^"]*/{name}/\?start=\d+)"', body)
    return found.group(1).replace("&amp;", "&") if found else None


@pytest.fixture
def many_files() -> Trajectory:
    """A session that writes FILES files, one per step."""
    b = AtifBuilder("claude-code", root="/repo")
    b.user("Scaffold the modules.")
    for i in range(FILES):
        b.call("Write", {"file_path": f"/repo/mod/m{i:04d}.py", "content": f"N = {i}\n"}, "ok")
    atif, side = b.build()
    return stored(atif, side, root="/repo")


def test_a_tree_of_a_thousand_files_shows_its_first_rows_and_the_rest_on_show_more(
    as_annotator, many_files
):
    last = many_files.steps_count - 1
    body = get(as_annotator, reverse("trajectories:step", args=[many_files.pk, last]))
    assert body.count('class="tree-row') == TREE_ROWS
    rows = FILES + 1  # the files and their folder
    assert f"… {rows - TREE_ROWS} more rows" in body
    link = more_link(body, "tree")
    assert link is not None and link.endswith(f"?start={TREE_ROWS}")

    shown = TREE_ROWS
    while link is not None:
        fragment = get(as_annotator, link, **HX)
        assert "<html" not in fragment
        added = fragment.count('class="tree-row')
        assert 0 < added <= TREE_ROWS
        assert f'data-path="mod/m{shown - 1:04d}.py"' in fragment  # picks up where it left off
        shown += added
        link = more_link(fragment, "tree")
    assert shown == rows
    # Without HTMX the link is a page of its own, with its place in the tree.
    page = get(as_annotator, f"{reverse('trajectories:step_tree', args=[many_files.pk, last])}")
    assert page.startswith("<!doctype html>") and f"rows 1–{TREE_ROWS} of {rows}" in page


CALLS = LIST_ITEMS * 2 + 20
LONG = 25_000  # characters of call 61's output: more than one field shows


@pytest.fixture
def many_calls() -> Trajectory:
    calls = [
        {"tool_call_id": f"c{i}", "function_name": "Read", "arguments": {"file_path": f"f{i}.py"}}
        for i in range(CALLS)
    ]
    results = [
        {"source_call_id": f"c{i}", "content": ("y" * LONG) if i == 60 else f"output of call {i}"}
        for i in range(CALLS)
    ]
    return make_trajectory(
        steps=[
            {"step_id": 1, "source": "user", "message": "Read everything."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "Reading.",
                "tool_calls": calls,
                "observation": {"results": results},
            },
        ]
    )


def test_tool_calls_past_the_first_fifty_come_with_their_results_on_show_more(
    as_annotator, many_calls
):
    body = get(as_annotator, reverse("trajectories:step", args=[many_calls.pk, 1]))
    assert body.count('<span class="call-name">Read</span>') == LIST_ITEMS
    assert f"… {CALLS - LIST_ITEMS} more tool calls in this step" in body
    assert "output of call 50" not in body  # not shown as a loose result either

    link = more_link(body, "calls")
    assert link is not None
    second = get(as_annotator, link, **HX)
    assert "<html" not in second and second.count('class="call-name"') == LIST_ITEMS
    assert 'id="call-51"' in second and 'id="call-100"' in second
    assert "output of call 50" in second and "output of call 99" in second
    assert "… 20 more tool calls" in second

    third = get(as_annotator, more_link(second, "calls"), **HX)
    assert third.count('class="call-name"') == 20 and "output of call 119" in third
    assert more_link(third, "calls") is None

    # Call 61's long output is cut there too, and its own "show more" finds it.
    field = re.search(r'hx-get="([^"]*field=call\.60\.out\.0[^"]*)"', second)
    assert field is not None
    rest = get(as_annotator, field.group(1).replace("&amp;", "&"), **HX)
    assert rest.count("y") == LONG - FIELD_CHARS  # the rest of it

    page = get(as_annotator, link)
    assert page.startswith("<!doctype html>") and "tool calls 51–100 of 120" in page


def test_a_show_more_of_a_step_that_is_not_there_is_404(as_annotator, many_calls):
    for name in ("step_calls", "step_tree"):
        assert (
            as_annotator.get(reverse(f"trajectories:{name}", args=[many_calls.pk, 9])).status_code
            == 404
        )
