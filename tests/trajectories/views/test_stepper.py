"""The replay stepper page: one step with its conversation, files, diff and checks."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.trajectories.factories import make_trajectory
from tests.trajectories.test_replay_reads import stored
from trajectories.core.replay.synthetic import AtifBuilder, claude_code_session
from trajectories.models import Trajectory

pytestmark = pytest.mark.django_db

PLANTED = "<script>document.body.dataset.pwned='1'</script>"
HX = {"HTTP_HX_REQUEST": "true"}

# The steps of the repair story below, by index.
WRITE_TOTALS, FAILING_CHECK, FIX, PASSING_CHECK, SED, PLANTED_OUTPUT, BLACK = 1, 4, 5, 6, 7, 8, 9


def repair_story(title: str = "Fix the off-by-one invoice total") -> Trajectory:
    """A Claude Code session: write, fail a test, fix, pass, then sed (lost) and black (a tree)."""
    b = AtifBuilder("claude-code", root="/repo")
    b.user("The invoice total is off by one; fix it and keep the tests green.")
    b.call(
        "Write",
        {"file_path": "/repo/app/totals.py", "content": "def total(xs):\n    return sum(xs) + 1\n"},
        "File created successfully at: /repo/app/totals.py",
    )
    b.call(
        "Write",
        {
            "file_path": "/repo/tests/test_totals.py",
            "content": "from app.totals import total\n\n\n"
            "def test_total():\n    assert total([1, 2]) == 3\n",
        },
        "File created successfully at: /repo/tests/test_totals.py",
    )
    b.call("Write", {"file_path": "/repo/app/config.py", "content": "DEBUG = True\n"}, "ok")
    b.call(
        "Bash",
        {"command": "python -m pytest -q"},
        "Exit code 1\nF\nFAILED tests/test_totals.py::test_total - assert 4 == 3\n1 failed",
        error=True,
    )
    b.call(
        "Edit",
        {"file_path": "/repo/app/totals.py", "old_string": "sum(xs) + 1", "new_string": "sum(xs)"},
        "The file /repo/app/totals.py has been updated.",
    )
    b.call("Bash", {"command": "python -m pytest -q"}, ".\n1 passed in 0.01s")
    b.call("Bash", {"command": "sed -i 's/True/False/' app/config.py"}, "")
    b.call("Bash", {"command": "cat notes.html"}, PLANTED + "<img src=x onerror=alert(1)>")
    b.call("Bash", {"command": "black ."}, "reformatted 2 files")
    atif, side = b.build()
    return stored(atif, side, root="/repo", title=title)


def url(trajectory: Trajectory, index: int) -> str:
    return reverse("trajectories:step", args=[trajectory.pk, index])


def file_url(trajectory: Trajectory, index: int, path: str) -> str:
    return reverse("trajectories:step_file", args=[trajectory.pk, index]) + f"?path={path}"


@pytest.fixture
def story(settings) -> Trajectory:
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": 3}
    return repair_story()


def page(client, trajectory: Trajectory, index: int, **headers) -> str:
    response = client.get(url(trajectory, index), **headers)
    assert response.status_code == 200
    return response.content.decode()


# -- page and fragment -----------------------------------------------------------------------------


def test_the_page_shows_the_step_message_files_and_navigation(as_annotator, story):
    body = page(as_annotator, story, FIX)
    assert body.startswith("<!doctype html>")
    assert 'id="step"' in body and "Step 6" in body and "of 10" in body
    assert "css/stepper.css" in body and "js/stepper.js" in body
    assert 'id="file-tree"' in body and "totals.py" in body and "test_totals.py" in body
    for key, target in (("k", FIX - 1), ("j", FIX + 1), ("p", FAILING_CHECK), ("n", PASSING_CHECK)):
        link = f'href="{url(story, target)}" hx-get="{url(story, target)}" data-key="{key}"'
        assert link in body, key


def test_an_htmx_request_gets_the_step_fragment_with_its_title(as_annotator, story):
    response = as_annotator.get(url(story, FIX), **HX)
    body = response.content.decode()
    assert "<html" not in body and '<header class="topbar"' not in body
    assert body.lstrip().startswith("<title>Step 6 · Fix the off-by-one invoice total")
    assert 'id="step"' in body and 'hx-push-url="true"' in body
    assert "HX-Request" in response["Vary"]


def test_a_history_restore_gets_the_whole_page(as_annotator, story):
    body = page(as_annotator, story, FIX, HTTP_HX_HISTORY_RESTORE_REQUEST="true", **HX)
    assert body.startswith("<!doctype html>") and 'class="topbar"' in body


def test_the_first_and_last_steps_disable_what_has_no_target(as_annotator, story):
    first = page(as_annotator, story, 0)
    assert '<span class="navbtn" aria-disabled="true" data-key="k"' in first
    assert '<span class="navbtn" aria-disabled="true" data-key="p"' in first
    last = page(as_annotator, story, BLACK)
    assert '<span class="navbtn" aria-disabled="true" data-key="j"' in last
    assert '<span class="navbtn" aria-disabled="true" data-key="n"' in last


# -- what a step shows ----------------------------------------------------------------------------


def test_tool_calls_show_name_arguments_and_highlighted_output(as_annotator, story):
    body = page(as_annotator, story, FAILING_CHECK)
    assert '<span class="call-name">Bash</span>' in body
    # the command goes through Pygments' bash lexer, the output is escaped text
    assert '<div class="hl"><pre><span></span><code>python<span class="w"> </span>-m' in body
    assert "FAILED tests/test_totals.py::test_total - assert 4 == 3" in body


def test_a_check_shows_its_command_cwd_and_exit_status(as_annotator, story):
    failing = page(as_annotator, story, FAILING_CHECK)
    assert '<span class="status status-fail"' in failing and "test · fail (exit 1)" in failing
    assert "<dt>Exit status</dt><dd>1" in failing
    assert (
        '<dt>Working directory</dt><dd><code>.</code> <span class="muted">(the project root)'
        in failing
    )
    assert "test · pytest · python" in failing
    passing = page(as_annotator, story, PASSING_CHECK)
    assert '<span class="status status-pass"' in passing and "test · pass" in passing
    assert "1 passed in 0.01s" in passing


def test_the_diff_shows_the_edit_against_the_previous_step(as_annotator, story):
    body = page(as_annotator, story, FIX)
    assert '<span class="gd">-    return sum(xs) + 1</span>' in body
    assert '<span class="gi">+    return sum(xs)</span>' in body
    assert '<span class="pill pill-modified">modified</span>' in body
    assert '<span class="plus">+1</span><span class="minus">−1</span>' in body


def test_a_new_file_is_diffed_against_nothing(as_annotator, story):
    body = page(as_annotator, story, WRITE_TOTALS)
    assert '<span class="gu">@@ -0,0 +1,2 @@</span>' in body
    assert '<span class="gi">+def total(xs):</span>' in body
    assert '<span class="pill pill-added">added</span>' in body


def test_a_lost_file_is_marked_in_the_tree_and_not_diffed(as_annotator, story):
    body = page(as_annotator, story, SED)
    assert '<li class="tree-row tree-file st-lost changed"' in body
    assert "Content after this step: unknown (lost)" in body
    assert '<span class="gd">' not in body  # nothing to diff: the new content is unknown
    later = page(as_annotator, story, PLANTED_OUTPUT)  # still lost, though unchanged there
    assert '<li class="tree-row tree-file st-lost"' in later
    assert '<span class="pill pill-lost">lost</span>' in later


def test_a_tree_marker_says_everything_under_it_is_uncertain(as_annotator, story):
    body = page(as_annotator, story, BLACK)
    assert (
        '<span class="tree-name">./**</span> <span class="pill pill-uncertain">uncertain</span>'
        in body
    )
    assert "Everything under the project root may have changed (uncertain)." in body


def test_a_step_without_changes_says_so(as_annotator, story):
    assert "No file changed at this step." in page(as_annotator, story, FAILING_CHECK)


def test_a_script_planted_in_a_tool_output_is_escaped(as_annotator, story):
    for headers in ({}, HX):
        body = page(as_annotator, story, PLANTED_OUTPUT, **headers)
        assert PLANTED not in body and "<img src=x" not in body
        assert "&lt;script&gt;document.body.dataset.pwned" in body


def test_the_step_list_shows_neighbours_with_check_outcomes(as_annotator, story):
    body = page(as_annotator, story, FIX)
    assert 'aria-current="step"' in body
    assert body.count('class="steprow src-') == 10  # all ten steps fit in the window
    assert body.count('<span class="dot dot-fail"') == 1
    assert body.count('<span class="dot dot-pass"') == 1


# -- the file view ---------------------------------------------------------------------------------


def test_the_file_fragment_shows_the_content_at_that_step_highlighted(as_annotator, story):
    response = as_annotator.get(file_url(story, WRITE_TOTALS, "app/totals.py"), **HX)
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith("<title>app/totals.py · Step 2")
    assert 'id="viewer"' in body and 'data-path="app/totals.py"' in body
    assert '<span class="linenos">1</span><span class="k">def</span>' in body  # Python lexer
    assert '<span class="o">+</span>' in body  # "+ 1", before the fix
    fixed = as_annotator.get(file_url(story, FIX, "app/totals.py"), **HX).content.decode()
    assert '<span class="o">+</span>' not in fixed


def test_the_file_view_without_htmx_is_the_stepper_with_the_file_open(as_annotator, story):
    body = as_annotator.get(file_url(story, FIX, "app/totals.py")).content.decode()
    assert body.startswith("<!doctype html>") and 'id="file-tree"' in body
    assert 'data-path="app/totals.py" aria-current="true"' in body
    assert "Changes at this step</h2>" not in body and "← Changes at this step" in body


def test_a_history_restore_of_a_file_url_gets_the_whole_page(as_annotator, story):
    restore = {"HTTP_HX_HISTORY_RESTORE_REQUEST": "true", **HX}
    body = as_annotator.get(file_url(story, FIX, "app/totals.py"), **restore).content.decode()
    assert body.startswith("<!doctype html>") and 'data-path="app/totals.py"' in body


def test_the_file_view_of_a_lost_file_says_so(as_annotator, story):
    body = as_annotator.get(file_url(story, SED, "app/config.py"), **HX).content.decode()
    assert "Content at this step: unknown (lost)" in body and 'class="hl"' not in body


def test_the_file_view_of_a_path_not_in_the_step_is_404(as_annotator, story):
    assert as_annotator.get(file_url(story, WRITE_TOTALS, "app/config.py")).status_code == 404
    assert as_annotator.get(file_url(story, FIX, "../etc/passwd"), **HX).status_code == 404


# -- out of range, go to, not yet replayed ---------------------------------------------------------


def test_a_step_beyond_the_end_redirects_to_the_last_step(as_annotator, story):
    response = as_annotator.get(url(story, 10_000))
    assert response.status_code == 302 and response["Location"] == url(story, BLACK)
    response = as_annotator.get(file_url(story, 99, "app/totals.py"))
    assert response["Location"] == file_url(story, BLACK, "app/totals.py")


@pytest.mark.parametrize(
    "typed, index", [("3", 2), ("#7", 6), ("0", 0), ("999", BLACK), ("x", FIX)]
)
def test_go_to_step_redirects_to_the_typed_step_clamped(as_annotator, story, typed, index):
    response = as_annotator.get(url(story, FIX), {"go": typed})
    assert response.status_code == 302 and response["Location"] == url(story, index)


def test_an_unknown_trajectory_is_404(as_annotator):
    assert as_annotator.get(reverse("trajectories:step", args=[999_999, 0])).status_code == 404


def test_a_trajectory_not_yet_replayed_shows_its_messages_and_a_notice(as_annotator):
    t = make_trajectory(steps=[{"step_id": 1, "source": "user", "message": "Add a CSV export"}])
    body = page(as_annotator, t, 0)
    assert "Add a CSV export" in body
    assert "Replay pending: this trajectory has not been replayed yet" in body
    assert 'id="file-tree"' not in body


def test_a_failed_replay_shows_why(as_annotator):
    t = make_trajectory(
        status=Trajectory.Status.REPLAY_FAILED, replay_error="ValueError: <bad patch>"
    )
    body = page(as_annotator, t, 0)
    assert "Replay failed: ValueError: &lt;bad patch&gt;" in body and 'id="file-tree"' not in body


def test_a_trajectory_without_steps_says_so(as_annotator):
    t = make_trajectory(steps=[])
    assert "This trajectory has no steps." in page(as_annotator, t, 0)


# -- access ----------------------------------------------------------------------------------------


def test_outsiders_get_403(client, people, story):
    client.force_login(people.eve)
    assert client.get(url(story, 0)).status_code == 403
    assert client.get(file_url(story, FIX, "app/totals.py"), **HX).status_code == 403


def test_login_is_required(client, story):
    response = client.get(url(story, 0))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_every_role_may_step_through(client, people, story):
    for user in (people.bob, people.carol, people.dave):
        client.force_login(user)
        assert client.get(url(story, FIX)).status_code == 200


def test_the_detail_page_links_to_the_stepper_and_each_check(as_annotator, story):
    body = as_annotator.get(reverse("trajectories:detail", args=[story.pk])).content.decode()
    assert f'href="{url(story, 0)}">Step through the replay' in body
    assert f'<a href="{url(story, FAILING_CHECK)}">{FAILING_CHECK + 1}</a>' in body
    assert f'<a href="{url(story, PASSING_CHECK)}">{PASSING_CHECK + 1}</a>' in body


# -- cost stays flat along the trajectory ----------------------------------------------------------


@pytest.fixture
def long_session(settings) -> Trajectory:
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": 16}
    s = claude_code_session(1500, seed=4)
    return stored(s.atif, s.side_data, root=s.root)


def queries_for(client, path: str, **headers) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path, **headers).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_a_late_step_costs_the_same_queries_as_the_first(as_annotator, long_session):
    t = long_session
    atif_sha = Trajectory.objects.get(pk=t.pk).atif_id
    early = queries_for(as_annotator, url(t, 1))
    for index in (700, 1_498, 1_499):
        late = queries_for(as_annotator, url(t, index), **HX)
        assert len(late) <= len(early), index
        assert not any(atif_sha in sql for sql in late), "the ATIF document is never read"
        chunk_reads = [sql for sql in late if "trajectories_replaychunk" in sql]
        assert len(chunk_reads) == 1


def test_a_late_step_applies_no_more_deltas_than_one_checkpoint_block(
    as_annotator, long_session, monkeypatch
):
    """The late step's work is bounded by the checkpoint interval, never by how far along the
    trajectory it is (the wall time of the two is benchmarks/bench_pages.py's business)."""
    from trajectories import replay_reads

    applied: list[int] = []
    real = replay_reads.state_from

    def counting(checkpoint, deltas):
        deltas = list(deltas)
        applied.append(len(deltas))
        return real(checkpoint, deltas)

    monkeypatch.setattr(replay_reads, "state_from", counting)
    for index in (1, 700, 1_498):
        applied.clear()
        assert as_annotator.get(url(long_session, index), **HX).status_code == 200
        assert applied and max(applied) < 16, (index, applied)  # REPLAY_CHECKPOINT_EVERY


# -- caps: a step page stays under 1 MB whatever the step holds ------------------------------------

MB = 1024 * 1024
BIG_LINE = "E   AssertionError: 0123456789abcdef0123456789abcdef\n"  # 53 characters


def one_call(name: str, arguments: dict, output: str) -> Trajectory:
    b = AtifBuilder("claude-code", root="/repo")
    b.user("Run the whole suite and tell me what fails.")
    b.call(name, arguments, output)
    atif, side = b.build()
    return stored(atif, side, root="/repo")


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def more_url(trajectory: Trajectory, index: int, field: str, start: int) -> str:
    path = reverse("trajectories:step_more", args=[trajectory.pk, index])
    return f"{path}?field={field}&start={start}"


@pytest.fixture
def huge_output() -> Trajectory:
    return one_call("Bash", {"command": "cat build.log"}, BIG_LINE * (50 * MB // len(BIG_LINE)))


def test_a_50_mb_tool_output_makes_a_step_page_under_1_mb_that_says_how_much_is_left(
    as_annotator, huge_output
):
    total = 50 * MB // len(BIG_LINE) * len(BIG_LINE)
    for headers in ({}, HX):
        body = page(as_annotator, huge_output, 1, **headers)
        assert len(body.encode()) < MB
        assert f"… {total - 10_000} more characters" in body and "(show more)</a>" in body
        assert (
            f'href="{more_url(huge_output, 1, "call.0.out.0", 10_000)}"'.replace("&", "&amp;")
            in body
        )


def test_show_more_returns_the_next_part_of_the_field_with_its_own_marker(
    as_annotator, huge_output
):
    total = 50 * MB // len(BIG_LINE) * len(BIG_LINE)
    response = as_annotator.get(more_url(huge_output, 1, "call.0.out.0", 10_000), **HX)
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body and len(body.encode()) < MB
    assert body.startswith('<div class="hl">') and body.count("AssertionError") == (
        (BIG_LINE * 2000)[10_000:60_000].count("AssertionError")
    )
    assert f"… {total - 60_000} more characters" in body
    assert 'hx-target="closest .more" hx-swap="outerHTML" hx-push-url="false"' in body
    whole = as_annotator.get(more_url(huge_output, 1, "call.0.out.0", 10_000)).content.decode()
    assert whole.startswith("<!doctype html>") and "characters 10001–60000 of" in whole


def test_show_more_of_a_field_the_step_does_not_have_is_404(as_annotator, story):
    assert as_annotator.get(more_url(story, FIX, "call.7.out.0", 0), **HX).status_code == 404
    assert as_annotator.get(more_url(story, 99, "message", 0)).status_code == 404


def test_deeply_nested_arrays_make_a_page_under_1_mb_with_the_depth_collapsed(as_annotator):
    arrays = [nested(400) for _ in range(166)]
    assert 130_000 < len(json.dumps(arrays)) < 140_000
    t = one_call("Query", {"rows": arrays}, "ok")
    body = page(as_annotator, t, 1)
    assert len(body.encode()) < MB
    assert "[… 1 item]" in body and "… 116 more items" in body


def test_a_step_with_thousands_of_tool_calls_stays_under_1_mb(as_annotator):
    calls = [({"file_path": f"/repo/f{i}.py"}, "x = 1\n" * 2000) for i in range(3000)]
    t = make_trajectory(
        steps=[
            {"step_id": 1, "source": "user", "message": "Read everything."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "Reading.",
                "tool_calls": [
                    {"tool_call_id": f"c{i}", "function_name": "Read", "arguments": args}
                    for i, (args, _) in enumerate(calls)
                ],
                "observation": {
                    "results": [
                        {"source_call_id": f"c{i}", "content": out}
                        for i, (_, out) in enumerate(calls)
                    ]
                },
            },
        ]
    )
    body = page(as_annotator, t, 1)
    assert len(body.encode()) < MB
    assert body.count('<span class="call-name">Read</span>') == 50
    assert "… 2950 more tool calls in this step" in body


def test_small_steps_show_no_more_marker(as_annotator, story):
    for index in range(10):
        assert 'class="more"' not in page(as_annotator, story, index)


def test_a_large_file_opens_cut_at_a_line_end_and_shows_more_numbered_where_it_left_off(
    as_annotator,
):
    t = one_call("Write", {"file_path": "/repo/big.py", "content": "x = 1\n" * 200_000}, "ok")
    path = reverse("trajectories:step_more", args=[t.pk, 1])
    for headers in ({}, HX):
        body = as_annotator.get(file_url(t, 1, "big.py"), **headers).content.decode()
        assert len(body.encode()) < MB
        link = re.search(rf'hx-get="({path}\?path=big.py&amp;field=file&amp;start=(\d+))"', body)
        assert link is not None
        shown = int(link.group(2))
        assert shown % 6 == 0 and f"… {1_200_000 - shown} more characters" in body  # whole lines
        assert f'<span class="linenos">{shown // 6}</span>' in body
        assert f'<span class="linenos">{shown // 6 + 1}</span>' not in body
    more = as_annotator.get(link.group(1).replace("&amp;", "&"), **HX).content.decode()
    assert f'<span class="linenos">{shown // 6 + 1}</span>' in more and "more characters" in more
    assert len(more.encode()) < MB
    assert as_annotator.get(f"{path}?path=nope.py&field=file&start=0").status_code == 404


def test_a_steps_timestamp_is_shown_to_the_second(as_annotator):
    t = make_trajectory(
        steps=[
            {
                "step_id": 1,
                "source": "user",
                "message": "hello",
                "timestamp": "2025-10-01T12:34:56.789123Z",
            }
        ]
    )
    body = page(as_annotator, t, 0)
    assert ">2025-10-01 12:34:56 UTC</time>" in body
    assert ">2025-10-01T12:34:56.789123Z<" not in body
