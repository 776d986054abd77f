"""The review desk in a real browser: deciding with the keyboard, candidates leaving the queue,
the audit trail, and two reviewers side by side (holds and blind review)."""

from __future__ import annotations

import pytest

from groundwork.models import AuditEvent
from tasks_review.models import Candidate, Review
from tasks_review.services import exports, reviews
from tests.tasks_review.factories import make_candidate
from tests.trajectories.factories import make_trajectory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def on_desk(page, pk: int) -> None:
    page.wait_for_selector(f"article#candidate-{pk}")
    page.wait_for_url(f"**/review/candidates/{pk}/")


def some_candidates(n: int) -> list[Candidate]:
    titles = [
        "Fix the off-by-one invoice total",
        "Make the CSV parser accept quoted commas",
        "Restore the retry on upload timeouts",
        "Repair the date rounding in reports",
    ]
    made = []
    for i in range(n):
        trajectory = make_trajectory(
            title=titles[i % len(titles)], format=["claude-code", "codex", "pi"][i % 3]
        )
        made.append(
            make_candidate(
                trajectory=trajectory,
                task_name=f"repair-{titles[i % len(titles)].lower().replace(' ', '-')[:40]}",
                language=["python", "javascript"][i % 2],
            )
        )
    return made


def test_decide_three_candidates_with_the_keyboard_and_see_the_audit(
    page, login, people, screenshot
):
    first, second, third, fourth = some_candidates(4)
    login(people.bob)
    page.goto("/review/")
    assert page.locator("#queue-results tbody tr").count() == 4
    screenshot("review-queue")

    page.keyboard.press("n")  # hold and open the next candidate
    on_desk(page, first.pk)
    page.evaluate("window.fullLoads = 1")  # survives only swaps, not page loads
    assert page.locator(".banner-mine").is_visible()
    page.keyboard.press("?")
    assert page.locator("#review-keys").is_visible()
    page.keyboard.press("?")
    assert not page.locator("#review-keys").is_visible()
    screenshot("review-candidate")

    page.keyboard.press("a")
    on_desk(page, second.pk)
    assert page.locator(".flash").inner_text().startswith(f"Candidate #{first.pk}: accept")

    page.keyboard.press("r")  # no reason yet: refused, shown in place
    page.wait_for_selector(".form-error:has-text('choose a reason')")
    page.keyboard.press("2")  # leaks the fix
    assert page.locator("input[name=reason][value=leaks_fix]").is_checked()
    page.keyboard.press("r")
    on_desk(page, third.pk)

    page.keyboard.press("4")  # environment broken
    page.keyboard.press("c")
    page.keyboard.type("the image lacks node")
    page.keyboard.press("Escape")
    page.keyboard.press("x")
    on_desk(page, fourth.pk)
    assert page.evaluate("window.fullLoads") == 1, "each next candidate came by swap"

    decided = {r.candidate_id: (r.decision, r.reason, r.comment) for r in Review.objects.all()}
    assert decided == {
        first.pk: ("accept", "good", ""),
        second.pk: ("reject", "leaks_fix", ""),
        third.pk: ("needs_fix", "environment_broken", "the image lacks node"),
    }

    page.goto("/review/")  # the three left the queue
    rows = page.locator("#queue-results tbody tr")
    assert rows.count() == 1
    assert rows.first.get_attribute("id") == f"candidate-{fourth.pk}-row"
    page.click("a.tab[href$='review=all']")
    page.wait_for_function(
        "() => document.querySelectorAll('#queue-results tbody tr').length === 4"
    )
    assert "review=all" in page.url

    page.goto("/review/audit/?actor=bob&verb=review.submit")
    assert page.locator("#audit-results tr[id^=audit-]").count() == 3
    page.goto("/review/audit/")
    assert page.locator("text=review.submit").count() >= 3
    assert page.locator("text=candidate.hold").count() >= 1
    screenshot("review-audit")


def test_j_and_k_step_through_the_queue_and_logs_open_in_place(page, login, people):
    first, second, _ = some_candidates(3)
    login(people.alice)
    page.goto(f"/review/candidates/{first.pk}/")  # the page posts the hold once it is up
    page.wait_for_selector(f"#hold-{first.pk} .banner-mine")
    page.keyboard.press("j")
    on_desk(page, second.pk)
    page.wait_for_selector(f"#hold-{second.pk} .banner-mine")  # a swapped-in desk posts it too
    first.refresh_from_db()
    assert first.held_by is None  # moving on freed the first
    page.keyboard.press("k")
    on_desk(page, first.pk)
    page.click(f"#candidate-{first.pk} #trial-{first.trials.get(role='noop', repeat=1).pk} a")
    page.wait_for_selector("#trial-logs pre.logs:has-text('== noop #1 ==')")
    assert page.url.endswith(f"/review/candidates/{first.pk}/")
    page.go_back()  # the back button still works after swaps
    on_desk(page, second.pk)


def test_two_reviewers_see_the_hold_and_review_blind(
    browser, live_server, page, login, people, settings, screenshot
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 2}
    first, second = some_candidates(2)
    login(people.alice)
    page.goto("/review/")
    page.keyboard.press("n")
    on_desk(page, first.pk)

    bob_context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1400, "height": 900}
    )
    bob = bob_context.new_page()
    bob.set_default_timeout(10_000)
    try:
        bob.goto("/accounts/login/")
        bob.fill("input[name=username]", "bob")
        bob.fill("input[name=password]", "pw-bob")
        bob.click("button[type=submit]")
        bob.wait_for_url(lambda url: "/accounts/login/" not in url)

        bob.goto("/review/")
        held = bob.locator(f"#candidate-{first.pk}-row .held-other")
        assert "alice" in held.inner_text()
        screenshot_page(bob, "review-queue-held")
        bob.goto(f"/review/candidates/{first.pk}/")
        assert "Held by alice" in bob.locator(".banner-held").inner_text()
        assert bob.locator("#decision-form").count() == 0
        bob.keyboard.press("a")  # nothing to press: no decision while alice holds it
        assert not Review.objects.filter(reviewer=people.bob).exists()

        page.keyboard.press("a")  # alice accepts; her hold ends with her decision
        on_desk(page, second.pk)

        bob.reload()
        assert bob.locator("#decision-form").count() == 1
        blind = bob.locator(".blind").inner_text()
        assert "1 other review in" in blind and "hidden until the candidate has all 2" in blind
        assert bob.locator(".reviews-panel .decision").count() == 0  # alice's accept unseen
        screenshot_page(bob, "review-candidate-blind")
        bob.keyboard.press("3")  # verifier gameable
        bob.keyboard.press("r")
        # alice holds the only other candidate now, so nothing is left for bob
        bob.wait_for_selector("article#candidate-none")

        bob.goto(f"/review/candidates/{first.pk}/")  # now bob sees both decisions
        assert bob.locator(".reviews-panel .decision-accept").count() == 1
        assert bob.locator(".reviews-panel .decision-reject").count() == 1
        assert "disputed" in bob.locator(".deskbar .rstatus").inner_text()

        bob.goto("/review/disputes/")
        assert bob.locator(f"#dispute-{first.pk}").is_visible()
        screenshot_page(bob, "review-disputes")
        bob.goto("/review/agreement/")
        assert bob.locator("#pair-alice-bob").is_visible()
        screenshot_page(bob, "review-agreement")
    finally:
        bob_context.close()

    page.goto(f"/review/candidates/{first.pk}/")  # alice, too, sees bob's decision now
    assert page.locator(".reviews-panel .decision-reject").count() == 1
    assert AuditEvent.objects.filter(verb="review.submit").count() == 2


def test_an_adjudicator_settles_a_dispute_and_exports_the_dataset(
    page, login, people, settings, tmp_path, screenshot
):
    from tests.tasks_review.factories import make_task_dir

    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 2}
    settings.VAR_DIR = tmp_path
    [c] = some_candidates(1)
    Candidate.objects.filter(pk=c.pk).update(
        task_dir=str(make_task_dir(tmp_path / "tasks", "repair-invoice"))
    )
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    reviews.review_submit(
        user=people.bob, candidate_id=c.pk, decision="needs_fix", reason="too_hard"
    )
    login(people.dave)
    page.goto("/review/disputes/")
    page.click(f"#dispute-{c.pk} a.button")
    on_desk(page, c.pk)
    assert page.locator(".decide-panel h2:has-text('Settle the dispute')").is_visible()
    page.keyboard.press("a")
    page.wait_for_selector("article#candidate-none")
    c.refresh_from_db()
    assert c.review_status == "accepted"

    page.goto("/review/exports/")
    page.click("button:has-text('Export 1 accepted task')")
    row = page.locator("tr.export-row").first
    assert row.locator(".status").inner_text() in ("queued", "running", "done")
    # No worker runs in this test: run the queued job as one would, and watch the row update.
    exports.dataset_export_execute(export_id=int(row.get_attribute("id").split("-")[1]))
    page.wait_for_selector("tr.export-row .status-done")
    assert (tmp_path / "exports").is_dir()
    screenshot("review-exports")


def screenshot_page(page, name: str) -> None:
    from tests.browser.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _until(check, seconds: float = 15.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.25)
    return False


def test_an_open_desk_renews_its_short_hold_and_gives_it_back_on_leaving(
    page, login, people, settings
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "HOLD_SECONDS": 20}  # a beat every 5 s
    [c] = some_candidates(1)
    login(people.bob)
    page.goto(f"/review/candidates/{c.pk}/")
    page.wait_for_selector(".banner-mine")
    first = Candidate.objects.get(pk=c.pk).held_until
    page.mouse.move(40, 40)  # someone is on the page
    assert _until(lambda: Candidate.objects.get(pk=c.pk).held_until > first)
    assert AuditEvent.objects.filter(verb="candidate.hold").count() == 1  # renewals are quiet
    page.goto("/review/")  # leaving: the page's beacon gives the candidate back
    assert _until(lambda: Candidate.objects.get(pk=c.pk).held_by_id is None)
    [left] = AuditEvent.objects.filter(verb="candidate.release")
    assert left.after["why"] == "left the page"
