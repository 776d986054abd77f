"""The learning loop's pages in a real browser: seed the catalogue, choose kept tasks, run an
eval, read the results table, and follow a missed expectation into the replay stepper."""

from __future__ import annotations

import pytest

from tests.tasks_review.factories import make_candidate
from tests.training.core.helpers import Session
from tests.training.factories import repaired
from tests.training.views.helpers import make_recorded_rollout
from training.core.catalogue import catalogue
from training.models import Behaviour, EvalRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def still_failing() -> Session:
    """Edits the code, runs the test, which still fails, and says it fixed it anyway."""
    s = Session()
    s.run("pytest tests/test_invoice.py", output="1 failed", exit_code=1)
    s.read("invoice.py", "def total():\n    return 0\n")
    s.edit("invoice.py", "return 0", "return 2")
    s.run("pytest tests/test_invoice.py", output="1 failed", exit_code=1)
    return s.say("Fixed, the tests pass now.")


FAILED_RUN_STEP = 3  # the last test run of still_failing(), 0-based


def test_seed_choose_tasks_evaluate_and_drill_down_to_the_stepper(
    page, login, people, screenshot, q_sync
):
    tasks = [
        make_candidate(trials=False, task_name=name)
        for name in ("repair-invoice-total", "repair-csv-quotes", "repair-date-rounding")
    ]
    login(people.bob)

    page.goto("/training/behaviours/")
    page.wait_for_selector("text=No behaviours yet.")
    page.click("button:has-text('Seed the catalogue')")
    page.wait_for_selector("#behaviour-list tbody tr")
    assert page.locator("#behaviour-list tbody tr").count() == len(catalogue())
    assert page.locator("button:has-text('Seed the catalogue')").count() == 0
    screenshot("training-behaviours")

    page.click("text=Repair the code behind a failing test")
    page.wait_for_url("**/training/behaviours/failing-test-repair/")
    # The page already lists the three: wait for the filtered list itself, or a late swap of it
    # would undo the boxes ticked below.
    with page.expect_response(lambda response: "q=repair-" in response.url):
        page.fill("input[name=q]", "repair-")
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')"
        " && document.querySelectorAll('[id$=-choosable] input[name=candidate]').length === 3"
    )
    for task in tasks:
        page.check(f"#choose-{task.pk}")
    page.click("button:has-text('Add chosen tasks')")
    page.wait_for_selector("text=Added 3 task(s)")
    behaviour = Behaviour.objects.get(slug="failing-test-repair")
    assert behaviour.tasks.count() == 3
    assert page.locator(".task-list li").count() == 3

    # Two agents on every task: one repairs it, one leaves the test failing and says it's fixed.
    for task in tasks:
        make_recorded_rollout(task, repaired(), agent="oracle", reward=1.0)
        make_recorded_rollout(task, still_failing(), agent="bluffer", reward=0.0)

    page.reload()
    page.fill("input[name=k]", "1")
    page.click("button:has-text('Run eval of v1')")
    run = EvalRun.objects.get()
    page.wait_for_url(f"**/training/evals/{run.pk}/")
    page.wait_for_selector("text=3 of 6 scored rollouts failed.")
    assert page.locator(f"#eval-run-{run.pk}-results tbody tr").count() == 6
    screenshot("training-eval-run")

    page.click("a[href='/training/behaviours/failing-test-repair/?version=1']")
    table = page.locator(f"#behaviour-{behaviour.pk}-results table.groups")
    table.wait_for()
    rows = table.locator("tbody tr")
    cells = {
        (
            rows.nth(i).locator("td").nth(0).inner_text(),
            rows.nth(i).locator("td").nth(1).inner_text(),
        )
        for i in range(rows.count())
    }
    groups = {(g["agent"], g["split"]) for g in EvalRun.objects.get().summary["groups"]}
    labels = {"train": "Train", "held_out": "Held-out"}
    assert cells == {(agent, labels[split]) for agent, split in groups}
    oracle = table.locator("tr:has(td:text-is('oracle'))").first
    assert oracle.locator("td").nth(4).inner_text() == "1.00"  # pass@1
    bluffer = table.locator("tr:has(td:text-is('bluffer'))").first
    assert bluffer.locator("td").nth(6).inner_text() == "0.00 ± 0.00"
    screenshot("training-behaviour")

    bluffer.locator("a:has-text('results')").click()
    page.wait_for_url("**/training/evals/**agent=bluffer**")
    page.locator("tr.verdict-fail a[href^='/training/results/']").first.click()
    page.wait_for_selector("h1:has-text('fail')")
    missed = page.locator(".item-missed:has-text('test check passed after the last edit')")
    assert missed.locator(".item-state").inner_text() == "missed"
    link = missed.locator("a.step-link")
    assert link.inner_text() == f"nearest: step {FAILED_RUN_STEP + 1}"
    screenshot("training-result")
    link.click()
    page.wait_for_url(f"**/steps/{FAILED_RUN_STEP}/")
    page.wait_for_selector(
        f"#step[data-step='{FAILED_RUN_STEP}'] h1:has-text('Step {FAILED_RUN_STEP + 1}')"
    )
    assert page.locator("#step").get_by_text("pytest tests/test_invoice.py").count() >= 1
    screenshot("training-result-stepper")

    page.go_back()  # the keys of the result page: s the first miss, u the results list
    page.wait_for_selector("body.result-page h1:has-text('fail')")
    page.keyboard.press("s")
    page.wait_for_url(f"**/steps/{FAILED_RUN_STEP}/")
    page.go_back()
    page.wait_for_selector("body.result-page")
    page.keyboard.press("u")
    page.wait_for_url(f"**/training/evals/{run.pk}/?agent=bluffer*")

    page.goto("/training/rollouts/?agent=bluffer")
    assert page.locator("#rollout-results tbody tr").count() == 3
    screenshot("training-rollouts")
