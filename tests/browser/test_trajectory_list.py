import pytest

from tests.trajectories.factories import make_trajectory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_log_in_search_and_open_a_trajectory(page, login, people, screenshot):
    make_trajectory(title="Fix the flaky uploader retry", format="codex", agent_name="codex")
    make_trajectory(title="Add CSV export", format="pi", agent_name="pi")
    login(people.alice)
    page.goto("/trajectories/")
    assert page.locator("#trajectory-results tbody tr").count() == 2
    screenshot("trajectory-list")

    page.fill("input[name=q]", "uploader")
    page.wait_for_function(
        "() => document.querySelectorAll('#trajectory-results tbody tr').length === 1"
    )
    assert "q=uploader" in page.url  # the filter is in the URL, so back and share work

    page.click("text=Fix the flaky uploader retry")
    page.wait_for_selector("h1:has-text('Fix the flaky uploader retry')")
    screenshot("trajectory-detail")


def test_a_planted_script_in_a_title_is_shown_as_text(page, login, people):
    make_trajectory(title="<img src=x onerror=\"document.body.dataset.pwned='1'\">")
    login(people.alice)
    page.goto("/trajectories/")
    assert page.locator("text=<img src=x").count() == 1
    assert page.evaluate("document.body.dataset.pwned") is None
