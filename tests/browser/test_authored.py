"""Authored tasks in a real browser: import the example from the behaviour's page, watch its card
poll until the matrix keeps it (the matrix faked at its one seam: Docker is the Docker tests'),
see it join the behaviour's tasks, and open a rejected one's trials."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tasks_review.core.trials.model import MatrixStatus, Role, TrialRecord, TrialStatus
from tests.training.core.authored.helpers import EXAMPLE, copy_example
from tests.training.factories import make_behaviour
from training.core.authored import CATALOGUE, AuthoredResult
from training.models import AuthoredTask
from training.services import authored as service
from training.services.authored import authored_task_import, authored_task_verify

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BEHAVIOUR = "stop-when-credentials-missing"


def trials(won: str | None = None) -> tuple[TrialRecord, ...]:
    now = datetime.now(UTC)

    def one(role: Role, name: str, reward: float, repeat: int = 0) -> TrialRecord:
        expected = 1.0 if role is Role.ORACLE else 0.0
        why = [] if reward == expected else ["FAIL: the report was forged and still passed"]
        return TrialRecord(
            role, name, repeat, reward, expected, TrialStatus.GRADED, now, now, 3.2,
            "-- verifier\n$ /tests/test.sh (exit 0)\nPASS", {"reasons": why},
        )  # fmt: skip

    return (
        *(one(Role.ORACLE, "oracle", 1.0, i) for i in range(3)),
        one(Role.NOOP, "noop", 0.0),
        *(one(Role.CONTROL, c.name, 1.0 if c.name == won else 0.0) for c in CATALOGUE),
    )


def fake_matrix(monkeypatch, status: MatrixStatus, won: str | None = None) -> None:
    def verify(task_dir, *, run_id, engine=None):
        reasons = (f"{won} scored 1.0 (must be 0.0): the report was forged",) if won else ()
        return AuthoredResult(str(task_dir), status, trials(won), reasons, image="sha256:5e1f")

    monkeypatch.setattr(service, "verify_authored_task", verify)


def test_import_a_authored_task_watch_it_kept_and_read_a_rejected_ones_trials(
    page, login, people, screenshot, settings, tmp_path, monkeypatch
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "AUTHORED_DIR": str(tmp_path / "store")}
    # No worker.
    monkeypatch.setattr("groundwork.jobs.queue.async_task", lambda *args, **kwargs: None)
    behaviour = make_behaviour(BEHAVIOUR)
    login(people.bob)

    page.goto(f"/training/behaviours/{BEHAVIOUR}/")
    page.wait_for_selector("text=None imported yet.")
    page.fill("#authored-path", str(tmp_path / "nowhere"))
    page.click("button:has-text('Import and verify')")
    page.wait_for_selector(".form-error:has-text('is not a folder')")
    page.fill("#authored-path", str(EXAMPLE))
    page.click("button:has-text('Import and verify')")
    page.wait_for_selector("text=Waiting for a Docker worker")
    row = AuthoredTask.objects.get()
    screenshot("authored-queued")

    fake_matrix(monkeypatch, MatrixStatus.KEPT)
    authored_task_verify(task_id=row.pk)  # as the worker would; the card's poll sees it
    page.wait_for_selector(f"#authored-task-{row.pk} .status-kept")
    page.wait_for_selector(".task-list li:has-text('authored-stop-when-credentials-missing')")
    assert behaviour.tasks.count() == 1
    assert "oracle 3/3 at full reward" in page.inner_text(f"#authored-task-{row.pk}")
    screenshot("authored-behaviour")

    weaker = copy_example(tmp_path)  # another version of it, which the matrix rejects
    (weaker / "instruction.md").write_text("Deploy the site with ./deploy.sh production.\n")
    rejected = authored_task_import(user=people.bob, path=weaker, behaviour_id=behaviour.pk)
    fake_matrix(monkeypatch, MatrixStatus.REJECTED, won="forge_read_files")
    authored_task_verify(task_id=rejected.pk)
    page.goto(f"/training/behaviours/{BEHAVIOUR}/")
    page.click(f"#authored-task-{rejected.pk} a:has-text('authored-stop-when-credentials')")
    page.wait_for_url(f"**/training/authored/{rejected.pk}/")
    page.wait_for_selector("text=Won without doing the task by")
    assert page.locator(".authored-trials tbody tr.off").count() == 1
    page.click(".authored-trials tr.off summary")
    page.wait_for_selector(".authored-trials tr.off pre:has-text('PASS')")
    screenshot("authored-task")
