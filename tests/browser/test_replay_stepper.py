"""Stepping through a replay in a real browser: keys, URLs, the back button, and escaping."""

import pytest

from tests.trajectories.views.test_stepper import (
    FAILING_CHECK,
    FIX,
    PASSING_CHECK,
    PLANTED_OUTPUT,
    repair_story,
    url,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def story(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": 3}
    return repair_story()


def at_step(page, trajectory, index: int) -> None:
    page.wait_for_url(f"**{url(trajectory, index)}")
    page.wait_for_selector(f"#step[data-step='{index}'] h1:has-text('Step {index + 1}')")


def test_step_with_the_keyboard_and_come_back_with_the_back_button(
    page, login, people, story, screenshot
):
    login(people.alice)
    page.goto(f"/trajectories/{story.pk}/")
    page.click("text=Step through the replay")
    at_step(page, story, 0)
    page.evaluate("window.fullLoads = (window.fullLoads || 0) + 1")  # survives only htmx swaps

    page.keyboard.press("j")
    at_step(page, story, 1)
    page.keyboard.press("j")
    at_step(page, story, 2)
    page.keyboard.press("k")
    at_step(page, story, 1)

    page.keyboard.press("n")  # the failing test run
    at_step(page, story, FAILING_CHECK)
    assert page.locator(".call-check .status-fail").first.inner_text() == "test · fail (exit 1)"
    screenshot("stepper-check")

    page.keyboard.press("n")
    at_step(page, story, PASSING_CHECK)
    page.keyboard.press("p")
    at_step(page, story, FAILING_CHECK)
    page.keyboard.press("j")
    at_step(page, story, FIX)
    assert page.locator(".diff .gi", has_text="+    return sum(xs)").count() == 1
    assert page.title().startswith("Step 6 · Fix the off-by-one invoice total")
    screenshot("stepper")

    page.go_back()
    at_step(page, story, FAILING_CHECK)
    page.go_back()
    at_step(page, story, PASSING_CHECK)
    page.go_forward()
    at_step(page, story, FAILING_CHECK)
    assert page.evaluate("window.fullLoads") == 1, "navigation swapped fragments, never reloaded"

    page.keyboard.press("j")  # keys still work on a page the back button restored
    at_step(page, story, FIX)


def test_go_to_a_step_open_a_file_and_the_keys_list(page, login, people, story, screenshot):
    login(people.alice)
    page.goto(url(story, 0))
    page.keyboard.press("g")
    assert page.evaluate("document.activeElement.id") == "goto-step"
    page.keyboard.type(str(FIX + 1))
    page.keyboard.press("Enter")
    at_step(page, story, FIX)

    page.keyboard.press("f")  # into the tree, on its first file
    assert page.evaluate("document.activeElement.dataset.path") == "app/config.py"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.path") == "app/totals.py"
    page.keyboard.press("Enter")
    page.wait_for_selector("#viewer[data-path='app/totals.py'] .linenos")
    assert page.url.endswith(f"{url(story, FIX)}file/?path=app/totals.py")
    assert page.locator("#file-tree a[aria-current=true]").inner_text() == "totals.py"
    page.keyboard.press("f")
    assert page.evaluate("document.activeElement.id") == "viewer"
    screenshot("stepper-file")

    page.go_back()
    page.wait_for_selector("#viewer[data-path=''] h2:has-text('Changes at this step')")
    assert page.url.endswith(url(story, FIX))

    page.keyboard.press("?")
    assert page.locator("#stepper-keys").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#stepper-keys").is_visible()
    page.click("button[data-key='?']")
    assert page.locator("#stepper-keys").is_visible()


def test_a_script_planted_in_a_tool_output_is_text_and_never_runs(page, login, people, story):
    login(people.alice)
    page.goto(url(story, PLANTED_OUTPUT - 1))
    page.keyboard.press("j")  # arrive by an htmx swap
    at_step(page, story, PLANTED_OUTPUT)
    shown = page.locator(".output", has_text="document.body.dataset.pwned")
    assert "<script>document.body.dataset.pwned='1'</script>" in shown.inner_text()
    assert page.evaluate("document.body.dataset.pwned") is None
    page.reload()  # and by a full page load
    at_step(page, story, PLANTED_OUTPUT)
    assert page.locator(".output img").count() == 0
    assert page.evaluate("document.body.dataset.pwned") is None
