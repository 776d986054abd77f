"""The learning loop in a real browser: a behaviour decided with its rationale; ten preference
pairs labelled by keyboard by two labellers side by side (sides randomised, labels blind,
agreement shown); an export started, its manifest shown, and a plan made on it."""

from __future__ import annotations

import pytest

from tests.browser.test_review_desk import screenshot_page
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.models import (
    Decision,
    PairLabel,
    PreferencePair,
    Rollout,
    TrainingExport,
    TrainingPlan,
)
from training.services.exports import training_export_execute
from training.services.pairs import pairs_build

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page, user) -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-" + user.username)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def test_a_behaviour_is_decided_with_its_rationale(page, login, people, screenshot):
    behaviour = behaviour_with("read-before-edit", train=2)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    evaluated(behaviour)
    login(people.bob)
    page.goto("/training/decisions/")
    page.click(f"#behaviour-{behaviour.pk} a.button")
    page.wait_for_url(f"**/training/behaviours/{behaviour.slug}/decide/")
    assert page.locator("#button-title").text_content() == "Build the button, don't train"
    assert page.locator("#base-groups tbody tr").count() >= 2
    screenshot("loop-decision")

    page.check("input[name=kind][value=script]")
    page.click("button:has-text('Record the decision')")  # no rationale: the browser asks
    assert not Decision.objects.exists()
    page.fill("textarea[name=rationale]", "A hook refuses the blind edit; nothing to train.")
    page.evaluate("window.fullLoads = 1")  # survives a swap, not a page load
    page.click("button:has-text('Record the decision')")
    page.wait_for_selector(".flash:has-text('Recorded: Script or hook.')")
    assert page.evaluate("window.fullLoads") == 1, "the decision came back by swap"
    history = page.locator(".history li").first.inner_text()
    assert "Script or hook" in history and "A hook refuses the blind edit" in history
    decision = Decision.objects.get()
    assert decision.decided_by == people.bob and decision.evidence
    screenshot("loop-decision-recorded")

    page.goto("/training/decisions/")
    assert "Script or hook" in page.locator(f"#behaviour-{behaviour.pk}").inner_text()


def current_pair(page) -> str | None:
    return page.evaluate("document.querySelector('.pairdesk')?.id ?? null")


def held_on_screen(page) -> None:
    """Wait for the pair's hold to come back: the answered banner takes no hold on load (it
    renews it on its beat)."""
    page.wait_for_selector('.pairdesk .hold[hx-trigger="hold-beat"] .banner-mine')


def press_and_wait(page, key: str) -> None:
    before = current_pair(page)
    page.keyboard.press(key)
    page.wait_for_function(
        "(old) => { const a = document.querySelector('.pairdesk'); return a && a.id !== old; }",
        arg=before,
    )


def choose(page, user, verdicts: dict[str, int]) -> str:
    """The key for this labeller's verdict on the pair on screen: they prefer the passing
    rollout, except bob on the pairs he sees as ties or disagrees with (by task)."""
    pk = int(page.locator(".pairdesk").get_attribute("data-pair"))
    pair = PreferencePair.objects.get(pk=pk)
    left = int(page.locator("#label-form input[name=left]").input_value())
    verdict = verdicts.get(f"{user.username}:{pair.task_id}", 0)
    if verdict == 2:
        return "t"
    wanted = pair.preferred_id
    if verdict == 1:  # the other one
        wanted = pair.rollout_a_id if wanted == pair.rollout_b_id else pair.rollout_b_id
    a_key, b_key = ("a", "b") if pk % 2 else ("1", "2")  # both spellings of each key
    return a_key if wanted == left else b_key


def test_two_labellers_label_ten_pairs_by_keyboard_blind_and_agreement_shows(
    browser, live_server, page, people, settings, screenshot
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    behaviour = behaviour_with(train=10)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    pairs = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    assert len(pairs) == 10
    tasks = [p.task_id for p in pairs]
    verdicts = {f"bob:{tasks[3]}": 1, f"bob:{tasks[6]}": 2, f"alice:{tasks[6]}": 2}

    bob_context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1400, "height": 900}
    )
    bob = bob_context.new_page()
    bob.set_default_timeout(10_000)
    try:
        log_in(page, people.alice)
        log_in(bob, people.bob)
        for p in (page, bob):
            p.goto(f"/training/labels/?behaviour={behaviour.slug}")
            p.keyboard.press("n")
            p.wait_for_selector(".pairdesk[data-pair]")
            held_on_screen(p)  # the page posts its hold once it is up
        assert current_pair(page) != current_pair(bob)  # one pair, one labeller at a time
        screenshot("loop-pair")

        # Alice reads before she decides: the keys, the steps, and a skip she comes back to.
        page.keyboard.press("?")
        assert page.locator("#label-keys").is_visible()
        page.keyboard.press("?")
        page.keyboard.press("j")
        assert page.locator(".arow.current").count() == 1
        page.keyboard.press("k")
        skipped = current_pair(page)
        press_and_wait(page, "s")
        assert current_pair(page) != skipped
        held_on_screen(page)  # a swapped-in pair posts its hold too
        on_screen = PreferencePair.objects.get(pk=int(current_pair(page).removeprefix("pair-")))
        assert on_screen.held_by == people.alice
        assert PreferencePair.objects.get(pk=int(skipped.removeprefix("pair-"))).held_by is None
        page.evaluate("window.fullLoads = 1")

        who = {id(page): people.alice, id(bob): people.bob}
        open_pages = [page, bob]
        while open_pages:
            for p in list(open_pages):
                if p.locator("#pair-none").count():
                    open_pages.remove(p)
                    continue
                if p.locator("#label-form").count() == 0:  # held by the other: move on
                    press_and_wait(p, "s")
                    continue
                if p is bob and PairLabel.objects.filter(labeller=people.bob).count() == 1:
                    # Blind: whatever alice said about this pair, bob sees only that she did.
                    assert "alice" not in bob.locator(".pairdesk").inner_text()
                    screenshot_page(bob, "loop-pair-blind")
                press_and_wait(p, choose(p, who[id(p)], verdicts))
        assert page.evaluate("window.fullLoads") == 1, "each next pair came by swap"
    finally:
        bob_context.close()

    assert PairLabel.objects.count() == 20
    assert set(PreferencePair.objects.values_list("status", flat=True)) == {"complete"}
    lefts = {(label.pair_id, label.labeller_id): label.left_id for label in PairLabel.objects.all()}
    assert any(lefts[(p.pk, people.alice.pk)] != lefts[(p.pk, people.bob.pk)] for p in pairs), (
        "sides are randomised per labeller"
    )
    assert PairLabel.objects.filter(chosen__isnull=True).count() == 2  # the two ties

    page.goto(f"/training/labels/?behaviour={behaviour.slug}")
    row = page.locator("#kappa-alice-bob").inner_text()
    assert "10" in row and "9" in row  # both labelled 10 pairs, agreed on 9
    assert page.locator("#alpha .stat-value").inner_text() not in ("", "n/a")
    screenshot("loop-labels-agreement")
    page.goto(f"/training/labels/pairs/{pairs[6].pk}/")  # complete: everyone's labels shown
    labels = page.locator(".label-list").inner_text()
    assert "alice (you): tie" in labels and "bob: tie" in labels


def test_x_labels_a_pair_both_bad(page, login, people):
    behaviour = behaviour_with(train=1)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    (pair,) = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    login(people.alice)
    page.goto(f"/training/labels/pairs/{pair.pk}/")
    held_on_screen(page)
    assert "Both bad" in page.locator('#label-form button[data-key="x"]').inner_text()
    page.keyboard.press("x")
    page.wait_for_selector("#pair-none")  # labelled: nothing left for alice
    label = PairLabel.objects.get()
    assert label.both_bad and label.chosen_id is None and label.labeller == people.alice


def test_an_export_is_started_its_manifest_shown_and_a_plan_made_on_it(
    page, login, people, settings, tmp_path, screenshot
):
    settings.VAR_DIR = tmp_path
    behaviour = behaviour_with(train=2, held_out=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    login(people.dave)
    page.goto("/training/exports/")
    page.select_option("select[name=behaviour]", behaviour.slug)
    page.select_option("select[name=kind]", "sft")
    page.click("button:has-text('Export')")
    page.wait_for_url("**/training/exports/*/")
    export = TrainingExport.objects.get()
    card = page.locator(f"#training-export-{export.pk}")
    assert card.locator(".status").inner_text().lower() in ("queued", "running", "done")
    # No worker runs in this test: run the queued job as one would, and watch the page follow.
    training_export_execute(export_id=export.pk)
    page.wait_for_selector(f"#training-export-{export.pk} .status-done")
    page.wait_for_selector("#sources")
    assert page.locator("dl.counts").inner_text().startswith("Rows\n2")
    assert "eval_failed" in page.locator(".manifest-grid").inner_text()
    screenshot("loop-export")

    page.click("a:has-text('Plan training on it')")
    page.wait_for_url("**/training/plans/new/?export=*")
    page.fill("input[name=base_model]", "Qwen/Qwen2.5-Coder-7B-Instruct")
    page.select_option("select[name=adapter]", "qlora")
    page.click("button:has-text('Save the plan')")
    page.wait_for_url("**/training/plans/*/")
    assert page.locator(".markdown h1").inner_text().startswith("Agent RL Sandbox Training Spec")
    assert "load_in_4bit: true" in page.locator("pre.code").inner_text()
    assert TrainingPlan.objects.get().export == export
    screenshot("loop-plan")

    # A re-grade since: the export is stale, says why, and is exported again from its page.
    export.refresh_from_db()
    rollout = Rollout.objects.get(pk=int(export.manifest["sources"][0]["trajectory_id"]))
    Rollout.objects.filter(pk=rollout.pk).update(reward=0.0)
    page.goto("/training/exports/")
    stale = page.locator(f"#training-export-stale-{export.pk}")
    assert "its inputs changed since it was written" in stale.inner_text()
    page.goto(f"/training/exports/{export.pk}/")
    assert page.locator("a:has-text('Plan training on it')").count() == 0
    page.click(f"#training-export-stale-{export.pk} button:has-text('Export again')")
    page.wait_for_url(lambda url: url.endswith("/") and f"/exports/{export.pk}/" not in url)
    again = TrainingExport.objects.exclude(pk=export.pk).get()
    assert page.url.endswith(f"/training/exports/{again.pk}/")
    assert (again.behaviour_id, again.kind) == (export.behaviour_id, export.kind)
    screenshot("loop-export-stale")
