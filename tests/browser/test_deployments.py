"""Deployments in a real browser, two people in two browser contexts: the registrar cannot approve
their own adapter, the approver approves after seeing the gate, the kill switch flips the route
endpoint's answer within a second, and rollback brings the previous version back."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from tests.training.factories.deploy import (
    READ,
    REPAIR,
    approver_who_reviews,
    gated_world,
    held_out_behaviour,
    live,
    next_version,
    rollouts,
    tasks_of,
)
from training.core.deploy.bucketing import subject_inside
from training.models import Deployment
from training.services.deploy_clients import api_client_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SUBJECT = subject_inside(REPAIR, 1000)


@pytest.fixture
def ask(live_server, people):
    """GET the route endpoint over HTTP with a real API client's token."""
    _client, token = api_client_create(user=people.dave, name="serving-host")

    def do() -> dict:
        request = urllib.request.Request(
            f"{live_server.url}/api/v1/route?behaviour={REPAIR}&subject={SUBJECT}",
            headers={"Authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
            return json.loads(response.read())

    return do


@pytest.fixture
def second(browser, live_server):
    """Another person's browser: a context of its own, with its own session."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def log_in(page, user) -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-" + user.username)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def test_the_registrar_cannot_approve_and_the_approver_approves_after_seeing_the_gate(
    page, second, people, screenshot
):
    frank = approver_who_reviews()  # reviewer and approver: only the two-person rule stops him
    repair = held_out_behaviour(REPAIR, tasks=5)
    held_out_behaviour(READ, candidates=tasks_of(repair))
    rollouts(tasks_of(repair), "repaired")
    # Served by the weights frank registers below (their digest, as serving recorded it).
    rollouts(
        tasks_of(repair),
        "repaired",
        adapter="failing-test-repair-lora-v1.0",
        served_sha256="b" * 64,
    )

    log_in(page, frank)
    page.goto(f"/training/adapters/new/?behaviour={REPAIR}")
    page.fill("input[name=version]", "1.0")
    page.fill("input[name=eval_suite]", "repair-held-out")
    page.fill("input[name=base_model]", "qwen-coder")
    page.fill("input[name=training_plan]", "plan-7")
    page.fill("input[name=dataset_sha256]", "a" * 64)
    page.fill("input[name=artifact_uri]", "s3://adapters/failing-test-repair-lora/1.0")
    page.fill("input[name=artifact_sha256]", "b" * 64)
    page.click("button:has-text('Register')")
    page.wait_for_selector("text=Registered failing-test-repair-lora@1.0.")
    assert page.locator(".gate-verdict").inner_text() == "passes"
    screenshot("deploy-adapter")
    page.click("button:has-text('Propose')")
    page.wait_for_url("**/training/deployments/*/")
    d = Deployment.objects.get()
    refusal = page.locator(".approve-form .refusal")
    assert (
        "frank registered failing-test-repair-lora@1.0 and cannot approve" in refusal.inner_text()
    )
    assert page.locator(f"#approve-{d.pk}").is_disabled()
    screenshot("deploy-registrar-refused")

    log_in(second, people.carol)
    second.goto(f"/training/deployments/{d.pk}/")
    # the gate, with its numbers, is on the page before the button
    assert second.locator("#gate-row-failing-test-repair td").nth(2).inner_text() == "5 / 5"
    assert second.locator("#gate-row-read-before-edit").is_visible()
    second.locator("#gate-row-failing-test-repair + tr summary").click()
    assert second.locator(".gate-rollouts .chip.pass").first.is_visible()
    second.evaluate("window.fullLoads = 1")
    second.click(f"#approve-{d.pk}")
    second.wait_for_selector("text=Approved on the held-out gate; the kill drill ran.")
    assert second.evaluate("window.fullLoads") == 1, "approved by an in-place swap"
    assert "passed: while killed, the endpoint answered the base model" in (
        second.locator(".drill").inner_text()
    )
    assert second.locator(".deployment-state").inner_text() == "approved"
    screenshot_of(second, "deploy-approved")

    page.reload()
    assert page.locator(".deployment-state").inner_text() == "approved"
    d.refresh_from_db()
    assert d.state == Deployment.State.APPROVED and d.approvals.get().approver == people.carol


def test_the_kill_switch_flips_the_endpoints_answer_within_a_second(
    page, login, people, ask, screenshot
):
    world = gated_world(people.bob)
    d = live(world.adapter, people.bob, people.carol)
    login(people.bob)
    page.goto(f"/training/deployments/{d.pk}/")
    assert ask()["adapter"] == "failing-test-repair-lora"
    screenshot("deploy-active")

    clicked = time.monotonic()
    page.click(f"#kill-{d.pk}")
    answers = []
    while time.monotonic() - clicked < 3:
        answers.append((time.monotonic() - clicked, ask()))
        if answers[-1][1]["adapter"] is None:
            break
        time.sleep(0.02)
    flipped_after, answer = answers[-1]
    assert answer == {
        "model": "qwen-coder",
        "adapter": None,
        "version": None,
        "deployment": str(d.pk),
        "reason": "killed",
    }
    assert flipped_after < 1.0, f"the endpoint still answered the adapter {flipped_after:.2f}s on"
    page.wait_for_selector("text=Killed: the route answers the base model.")
    assert page.locator(".deployment-state").inner_text() == "killed"
    screenshot("deploy-killed")


def test_rollback_restores_the_previous_version(page, second, people, ask, screenshot):
    world = gated_world(people.bob)
    first = live(world.adapter, people.bob, people.carol)
    newer = live(next_version(world, people.bob, "1.1"), people.bob, people.carol)
    assert ask()["version"] == "1.1"

    log_in(second, people.carol)
    second.goto(f"/training/deployments/{newer.pk}/")
    button = second.locator(f"#rollback-{newer.pk}")
    assert button.inner_text() == f"Roll back to #{first.pk} (failing-test-repair-lora@1.0)"
    button.click()
    second.wait_for_selector(
        f"text=deployment {first.pk} (failing-test-repair-lora@1.0) serves again"
    )
    assert second.locator(".deployment-state").inner_text() == "rolled back"
    assert ask() == {
        "model": "failing-test-repair-lora-v1.0",
        "adapter": "failing-test-repair-lora",
        "version": "1.0",
        "deployment": str(first.pk),
        "reason": "adapter",
    }
    screenshot_of(second, "deploy-rolled-back")

    log_in(page, people.bob)
    page.goto("/training/deployments/")
    assert page.locator(f"#deployment-{first.pk}-row .status").inner_text() == "active"
    assert page.locator(f"#deployment-{newer.pk}-row .status").inner_text() == "rolled back"
    page.goto("/training/serving/")
    assert "failing-test-repair-lora-v1.0" in page.locator("#litellm-config").inner_text()
    screenshot("deploy-serving")


def screenshot_of(page, name: str) -> None:
    from tests.browser.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
