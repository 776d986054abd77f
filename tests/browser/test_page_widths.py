"""The pages a newcomer found clipped, at the widths people use: 1280, 1440 and 1920 px.

Nothing is cut: every cell of the desk's trial matrix and of the run page's yield tables ends
inside its panel, every box that hides overflow and the window. A trial's logs open in view.
A step a page names is the step its link opens. The error pages keep the navigation.
"""

from __future__ import annotations

import re

import pytest

from tasks_review.models import Candidate, TrialRun
from tests.tasks_review.factories import make_candidate, make_trials
from tests.tasks_review.test_views_runs import make_run
from tests.training.factories.loop import (
    FIXED,
    behaviour_with,
    evaluated,
    fixing,
    make_trajectory_rollout,
    tasks_of,
)
from tests.trajectories.factories import make_trajectory
from tests.trajectories.views.test_stepper import FAILING_CHECK, PASSING_CHECK, repair_story

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 1440, 1920)
# Controls of the real kit, the longest names among them.
CONTROLS = (
    "forge_reward_files",
    "selective_forgery_spares_unknown_tests",
    "selective_forgery_by_call_stack",
    "symlink_submission_outside",
    "symlink_tests_outside",
    "rewritten_results_in_flight",
    "exit_early_success",
    "skip_every_test",
)

# Each matched element whose right edge passes the panel or card it sits in, any ancestor that
# hides or scrolls its overflow, or the window; with by how many pixels.
CLIPPED = """
(selector) => {
  const out = [];
  const width = document.documentElement.clientWidth;
  for (const el of document.querySelectorAll(selector)) {
    const right = el.getBoundingClientRect().right;
    const row = el.closest("tr");
    const name = `${row && row.id || "head"} column ${el.cellIndex + 1} "${el.textContent.trim()}"`;
    if (right > width + 0.5) out.push(`${name}: ${Math.round(right - width)} px past the window`);
    for (let box = el.parentElement; box; box = box.parentElement) {
      const style = getComputedStyle(box);
      const keeps = style.overflowX !== "visible" || box.matches(".panel, .card");
      const edge = box.getBoundingClientRect().right;
      if (keeps && right > edge + 0.5) {
        out.push(`${name}: ${Math.round(right - edge)} px past ${box.tagName}.${box.className}`);
      }
    }
  }
  return out;
}
"""


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def width(request, page) -> int:
    page.set_viewport_size({"width": request.param, "height": 900})
    return request.param


def clipped(page, selector: str) -> list[str]:
    assert page.locator(selector).count(), f"nothing matches {selector}"
    return page.evaluate(CLIPPED, selector)


def test_the_desks_trial_matrix_is_whole_and_a_trials_logs_open_in_view(
    page, login, people, screenshot, width
):
    candidate = make_candidate(
        trajectory=make_trajectory(title="Make the CSV parser accept quoted commas"),
        task_name="repair-make-the-csv-parser-accept-quoted-commas",
        trials=False,
    )
    make_trials(candidate, controls=CONTROLS)  # a real matrix: taller than the window
    candidate.trials.filter(role="symlink_tests_outside", repeat=0).update(
        status=TrialRun.Status.UNGRADED, reward=None, duration_ms=183_400
    )
    login(people.bob)
    page.goto(f"/review/candidates/{candidate.pk}/")
    page.wait_for_selector(f"#hold-{candidate.pk} .banner-mine")
    screenshot(f"desk-{width}")
    cut = clipped(page, "table.trials th, table.trials td")
    assert not cut, "\n".join(cut)

    last = page.locator("table.trials tbody tr").last  # the farthest down the page
    role, repeat = (last.locator("td").nth(i).inner_text() for i in (0, 1))
    last.locator("a:text('logs')").click()
    logs = page.wait_for_selector(f"#trial-logs pre.logs:has-text('== {role} #{repeat} ==')")
    page.wait_for_timeout(400)  # any smooth scroll settles
    head = page.locator("#trial-logs .logs-head").bounding_box()
    assert 0 <= head["y"] and head["y"] + head["height"] <= 900, head
    box = logs.bounding_box()
    assert box["y"] < 900 - 60, box  # the log's first lines are on screen
    assert page.url.endswith(f"/review/candidates/{candidate.pk}/")
    screenshot(f"desk-logs-{width}")


@pytest.fixture
def yielding_run():
    """A run mid-verify with candidates in three harnesses and four languages."""
    run = make_run(status="running", stage="verify", stage_done=5, stage_total=8)
    languages = ["python", "javascript", "typescript", "rust"]
    for i in range(8):
        trajectory = make_trajectory(
            title=f"Fix the failing test number {i}", format=["claude-code", "codex", "pi"][i % 3]
        )
        make_candidate(
            run=run,
            trajectory=trajectory,
            language=languages[i % 4],
            trials=False,
            status=[Candidate.Status.KEPT, Candidate.Status.DROPPED][i % 2],
            task_dir=f"/tmp/out/task-{i}",
        )
    return run


def test_the_run_pages_yield_tables_stay_inside_their_card(
    page, login, people, screenshot, width, yielding_run
):
    login(people.bob)
    page.goto(f"/runs/{yielding_run.pk}/")
    page.wait_for_selector(f"#run-{yielding_run.pk}-yield")
    cells = f"#run-{yielding_run.pk}-yield th, #run-{yielding_run.pk}-yield td"
    screenshot(f"run-yield-{width}")
    cut = clipped(page, cells)
    assert not cut, "\n".join(cut)
    kept = page.locator(f"#run-{yielding_run.pk}-progress dl.counts div:has(dt:text-is('kept')) dd")
    assert kept.inner_text() == "4"  # the cards count as the yield table does


def test_a_step_named_on_the_run_page_opens_on_that_step(page, login, people, width):
    story = repair_story()
    run = make_run(status="done")
    make_candidate(run=run, trajectory=story, fail_step=FAILING_CHECK, pass_step=PASSING_CHECK)
    login(people.bob)
    page.goto(f"/runs/{run.pk}/")
    link = page.locator("a:has-text('fails at step')")
    said = int(re.search(r"step (\d+)", link.inner_text()).group(1))
    link.click()
    page.wait_for_selector("h1:has-text('Step')")
    assert page.locator("h1").first.inner_text().startswith(f"Step {said} ")
    assert said == FAILING_CHECK + 1


def test_the_hook_is_tried_on_a_behaviours_rollouts_from_its_decision_page(
    page, login, people, screenshot, width
):
    """failing-test-repair forbids deleting outside the project: its trial once answered 500."""
    behaviour = behaviour_with("failing-test-repair", train=1)
    [task] = tasks_of(behaviour)
    make_trajectory_rollout(task.candidate, fixing("rm -rf ../other-project"), reward=0.0)
    make_trajectory_rollout(task.candidate, fixing(), reward=1.0, world=FIXED)
    evaluated(behaviour)
    login(people.bob)
    page.goto(f"/training/behaviours/{behaviour.slug}/decide/")
    page.click("button:has-text('Test the hook on this behaviour')")
    trial = f"#behaviour-{behaviour.pk}-hook-trial"
    page.wait_for_selector(f"{trial} table", timeout=60_000)
    assert page.locator(f"{trial} .ok-mark").count() == 2
    page.locator(trial).scroll_into_view_if_needed()
    cut = clipped(page, f"{trial} th, {trial} td")
    assert not cut, "\n".join(cut)
    screenshot(f"hook-trial-{width}")


def test_a_missing_page_keeps_the_navigation(page, login, people, screenshot, width):
    login(people.bob)
    response = page.goto("/review/candidates/987654/")
    assert response.status == 404
    assert page.locator("nav.mainnav a:text('Review')").is_visible()
    assert page.locator("h1:text('Page not found')").is_visible()
    screenshot(f"not-found-{width}")
