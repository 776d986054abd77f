"""Authored tasks on the pages: the behaviour's list and its import form, importing (a job on
the docker queue) or being refused in words, a task's page polling while its matrix runs and
then showing every trial escaped, verifying an ungraded one again, and who may do what."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tasks_review.core.trials.model import MatrixStatus, Role, TrialRecord, TrialStatus
from tests.training.core.authored.helpers import EXAMPLE, copy_example
from tests.training.factories import make_behaviour
from training.core.authored import AuthoredResult
from training.models import AuthoredTask
from training.services import authored as service
from training.services.authored import authored_task_import, authored_task_verify

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
BEHAVIOUR = "stop-when-credentials-missing"
PAGE = f"/training/behaviours/{BEHAVIOUR}/"


def html(response) -> str:
    return response.content.decode()


@pytest.fixture(autouse=True)
def store(settings, tmp_path):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "AUTHORED_DIR": str(tmp_path / "store")}


@pytest.fixture
def behaviour(db):
    return make_behaviour(BEHAVIOUR)


def record(role: Role, reward: float | None, name: str, logs: str = "") -> TrialRecord:
    now = datetime.now(UTC)
    expected = 1.0 if role is Role.ORACLE else 0.0
    return TrialRecord(
        role, name, 0, reward, expected, TrialStatus.GRADED, now, now, 2.5, logs, {"reasons": []}
    )


def verified(monkeypatch, row: AuthoredTask, status: MatrixStatus, *trials: TrialRecord):
    def verify(task_dir, *, run_id, engine=None):
        reasons = ("forge_read_files scored 1.0 (must be 0.0)",) if status == "rejected" else ()
        return AuthoredResult(str(task_dir), status, trials, reasons, image="sha256:abc")

    monkeypatch.setattr(service, "verify_authored_task", verify)
    return authored_task_verify(task_id=row.pk)


def test_the_behaviour_page_offers_the_import_to_those_who_may(client, people, behaviour):
    client.force_login(people.bob)
    page = html(client.get(PAGE))
    assert 'id="authored"' in page and "Import an authored task" in page
    assert "None imported yet." in page and "samples/authored/" in page
    client.force_login(people.alice)
    page = html(client.get(PAGE))
    assert "Authored tasks" in page and "Import an authored task" not in page


def test_importing_a_folder_queues_its_matrix_on_the_docker_queue(
    client, people, behaviour, django_capture_on_commit_callbacks, monkeypatch
):
    queued = []
    monkeypatch.setattr(
        "groundwork.jobs.queue.async_task",
        lambda func, *args, **kw: queued.append((func, args, kw)),
    )
    client.force_login(people.bob)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{PAGE}authored/", {"path": str(EXAMPLE)})
    row = AuthoredTask.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{PAGE}#authored-task-{row.pk}"
    assert (row.status, row.behaviour, row.created_by) == ("queued", behaviour, people.bob)
    assert queued == [
        ("training.tasks.authored_task_job", (row.pk,), {"group": "authored", "cluster": "docker"})
    ]
    page = html(client.get(PAGE))
    assert f"Authored task {row.pk} queued" in page
    card = page[page.index(f'id="authored-task-{row.pk}"') :]
    assert 'hx-trigger="every 1s"' in card[: card.index("</article>")]
    assert "Waiting for a Docker worker" in card


def test_a_folder_that_is_no_task_is_refused_at_422_with_its_problems(
    client, people, behaviour, tmp_path
):
    folder = copy_example(tmp_path)
    (folder / "tests" / "test.sh").unlink()
    client.force_login(people.bob)
    response = client.post(f"{PAGE}authored/", {"path": str(folder)})
    assert response.status_code == 422
    assert "tests/test.sh is missing" in html(response) and f'value="{folder}"' in html(response)
    empty = client.post(f"{PAGE}authored/", {"path": " "})
    assert empty.status_code == 422 and "Give the server path of a Harbor task folder" in html(
        empty
    )
    assert not AuthoredTask.objects.exists()


def test_the_same_folder_while_it_is_verified_is_refused_at_409(client, people, behaviour):
    authored_task_import(user=people.bob, path=EXAMPLE, behaviour_id=behaviour.pk)
    client.force_login(people.dave)
    response = client.post(f"{PAGE}authored/", {"path": str(EXAMPLE)})
    assert response.status_code == 409 and "is being verified" in html(response)


def test_a_task_polls_while_verifying_and_stops_with_286_when_kept(
    client, people, behaviour, monkeypatch
):
    row = authored_task_import(user=people.bob, path=EXAMPLE, behaviour_id=behaviour.pk)
    client.force_login(people.carol)
    target = {**HX, "HX-Target": f"authored-task-{row.pk}"}
    waiting = client.get(f"/training/authored/{row.pk}/", headers=target)
    body = html(waiting).strip()
    assert waiting.status_code == 200 and "<html" not in body
    assert body.startswith(f'<article class="card authored-task" id="authored-task-{row.pk}"')
    assert 'hx-get="/training/authored/' in body and f'href="/training/authored/{row.pk}/"' in body
    done = verified(
        monkeypatch,
        row,
        MatrixStatus.KEPT,
        record(Role.ORACLE, 1.0, "oracle"),
        record(Role.NOOP, 0.0, "noop"),
        record(Role.CONTROL, 0.0, "forge_reward_files"),
    )
    last = client.get(f"/training/authored/{row.pk}/", headers=target)
    assert last.status_code == 286 and last["HX-Refresh"] == "true"
    assert "every 1s" not in html(last)
    assert "oracle 1/1 at full reward · no-op at 0 · controls 1/1 at 0" in html(last)
    assert f"Kept as task #{done.candidate_id}, a task of {BEHAVIOUR}" in html(last)
    page = html(client.get(PAGE))
    assert (
        f'href="/training/authored/{row.pk}/"' in page
        and '<span class="tag">authored</span>' in page
    )


def test_a_tasks_page_shows_every_trial_and_escapes_what_ran(
    client, people, behaviour, monkeypatch
):
    row = authored_task_import(user=people.bob, path=EXAMPLE, behaviour_id=behaviour.pk)
    verified(
        monkeypatch,
        row,
        MatrixStatus.REJECTED,
        record(Role.ORACLE, 1.0, "oracle", logs="<script>alert(1)</script>"),
        record(Role.NOOP, 0.0, "noop"),
        record(Role.CONTROL, 1.0, "forge_read_files"),
    )
    client.force_login(people.alice)
    response = client.get(f"/training/authored/{row.pk}/")
    page = html(response)
    assert response.status_code == 200 and "<html" in page
    assert "Won without doing the task by <code>forge_read_files</code>" in page
    assert "forge_read_files scored 1.0 (must be 0.0)" in page
    assert page.count(f'id="authored-task-{row.pk}-trial-') == 3
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "Verify again" not in page  # rejected: a verdict, not a failure to retry


def test_an_ungraded_task_is_verified_again_from_its_page(
    client, people, behaviour, monkeypatch, django_capture_on_commit_callbacks
):
    row = authored_task_import(user=people.bob, path=EXAMPLE)
    verified(monkeypatch, row, MatrixStatus.UNGRADED)
    monkeypatch.setattr("groundwork.jobs.queue.async_task", lambda *a, **kw: None)
    client.force_login(people.bob)
    page = html(client.get(f"/training/authored/{row.pk}/"))
    assert "Verify again" in page and "Docker failed under it" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/training/authored/{row.pk}/retry/")
    assert response.status_code == 302 and response["Location"] == f"/training/authored/{row.pk}/"
    row.refresh_from_db()
    assert row.status == "queued"
    again = client.post(f"/training/authored/{row.pk}/retry/", follow=True)
    assert "only ungraded ones are retried" in html(again)
    assert client.post("/training/authored/999999/retry/").status_code == 404
    assert client.get("/training/authored/999999/").status_code == 404


@pytest.mark.parametrize("who", ["alice", "bob", "carol", "dave", "eve", None])
def test_who_may_see_import_and_retry(client, people, behaviour, who, tmp_path):
    row = authored_task_import(user=people.bob, path=EXAMPLE)
    if who:
        client.force_login(getattr(people, who))
    seen = client.get(f"/training/authored/{row.pk}/")
    imported = client.post(f"{PAGE}authored/", {"path": str(copy_example(tmp_path))})
    AuthoredTask.objects.filter(pk=row.pk).update(status="ungraded")
    retried = client.post(f"/training/authored/{row.pk}/retry/")
    if who is None:
        assert {seen.status_code, imported.status_code, retried.status_code} == {302}
        return
    assert seen.status_code == (403 if who == "eve" else 200)
    may = who in ("bob", "dave")
    # The copy is the example's content, queued already: through the role check, 409.
    assert imported.status_code == (409 if may else 403)
    assert retried.status_code == (302 if may else 403)
