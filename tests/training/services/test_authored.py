"""Authored tasks as rows: importing a folder (checked, stored by content, queued, audited),
the verification job with the trial matrix faked at its one seam, what a kept one becomes
(a kept task of family "authored" joining its behaviour), retries, and where it does not go
(the review desk, re-verification by the mined tasks' grader)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from groundwork.access.errors import Conflict, NotFound, NotPermitted
from groundwork.models import AuditEvent
from tasks_review.core.trials.model import MatrixStatus, Role, TrialRecord, TrialStatus
from tasks_review.models import Candidate
from tasks_review.selectors.reviewable import reviewable
from tasks_review.services.reverify import stale_kept
from tests.groundwork.core.docker.fakes import FakeEngine
from tests.training.core.authored.helpers import EXAMPLE, copy_example
from tests.training.factories import make_behaviour
from training.core.authored import AuthoredResult
from training.core.harbor.jobs import task_digest
from training.models import AuthoredTask, BehaviourTask, Rollout
from training.services import authored as service
from training.services.authored import (
    TaskFolderInvalid,
    authored_task_import,
    authored_task_retry,
    authored_task_verify,
)
from training.services.rollouts import rollouts_regrade

pytestmark = pytest.mark.django_db
BEHAVIOUR = "stop-when-credentials-missing"


@pytest.fixture(autouse=True)
def store(settings, tmp_path) -> Path:
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "AUTHORED_DIR": str(tmp_path / "store")}
    return tmp_path / "store"


def trial(role: Role, reward: float | None, *, name: str | None = None, repeat: int = 0):
    now = datetime.now(UTC)
    status = TrialStatus.GRADED if reward is not None else TrialStatus.UNGRADED
    expected = 1.0 if role is Role.ORACLE else 0.0
    detail = {} if reward is not None else {"infra_error": "the daemon went away"}
    return TrialRecord(
        role, name or str(role), repeat, reward, expected, status, now, now, 1.0, "", detail
    )


KEPT = (
    *(trial(Role.ORACLE, 1.0, repeat=i) for i in range(3)),
    trial(Role.NOOP, 0.0),
    trial(Role.CONTROL, 0.0, name="forge_reward_files"),
)


def fake_matrix(monkeypatch, status: MatrixStatus, trials=KEPT, reasons=()) -> list[str]:
    """The trial matrix at its one seam: the folder it was given is recorded."""
    seen: list[str] = []

    def verify(task_dir, *, run_id, engine=None):
        seen.append(str(task_dir))
        return AuthoredResult(
            str(task_dir), status, tuple(trials), tuple(reasons), image="sha256:1"
        )

    monkeypatch.setattr(service, "verify_authored_task", verify)
    return seen


def test_importing_stores_the_folder_by_content_and_queues_it(people, store):
    row = authored_task_import(user=people.bob, path=EXAMPLE)
    assert row.status == AuthoredTask.Status.QUEUED and row.created_by == people.bob
    assert (
        row.path == str(EXAMPLE) and row.name == "traj2env/authored-stop-when-credentials-missing"
    )
    stored = Path(row.task_dir)
    assert stored.is_relative_to(store) and (stored / "tests" / "test.sh").is_file()
    assert row.digest == task_digest(EXAMPLE), "the digest of the folder as the author gave it"
    # The copy is the same task, its solve.sh wrapped to leave its trajectory under Harbor.
    authored = (EXAMPLE / "solution" / "solve.sh").read_bytes()
    assert (stored / "solution" / "solve.authored.sh").read_bytes() == authored
    wrapper = (stored / "solution" / "solve.sh").read_text()
    assert "records the authored solution's trajectory" in wrapper
    for path in EXAMPLE.rglob("*"):
        rel = path.relative_to(EXAMPLE)
        if path.is_file() and rel.as_posix() != "solution/solve.sh":
            assert (stored / rel).read_bytes() == path.read_bytes(), rel
    event = AuditEvent.objects.get(verb="authored_task.import")
    assert (event.actor, event.target_id) == (people.bob, str(row.pk))


def test_the_same_content_under_another_name_is_stored_once(people, tmp_path, monkeypatch):
    first = authored_task_import(user=people.bob, path=EXAMPLE)
    fake_matrix(monkeypatch, MatrixStatus.UNGRADED, trials=(trial(Role.ORACLE, None),))
    authored_task_verify(task_id=first.pk)
    again = authored_task_import(user=people.bob, path=copy_example(tmp_path))
    assert again.path.endswith("/example") and again.task_dir == first.task_dir


def test_a_folder_that_is_no_authored_task_is_refused_with_every_problem(people, tmp_path):
    folder = copy_example(tmp_path)
    (folder / "solution" / "solve.sh").unlink()
    with pytest.raises(TaskFolderInvalid) as raised:
        authored_task_import(user=people.bob, path=folder)
    assert "solution/solve.sh is missing" in raised.value.problems
    assert not AuthoredTask.objects.exists()


def test_importing_needs_the_role_and_for_a_behaviour_the_right_to_choose_its_tasks(people):
    behaviour = make_behaviour(BEHAVIOUR)
    for who in (people.alice, people.carol, people.eve):
        with pytest.raises(NotPermitted):
            authored_task_import(user=who, path=EXAMPLE)
    with pytest.raises(NotFound):
        authored_task_import(user=people.bob, path=EXAMPLE, behaviour_id=behaviour.pk + 1)
    row = authored_task_import(user=people.dave, path=EXAMPLE, behaviour_id=behaviour.pk)
    assert row.behaviour == behaviour


def test_the_same_content_is_not_verified_twice_at_once_nor_kept_twice(people, monkeypatch):
    first = authored_task_import(user=people.bob, path=EXAMPLE)
    with pytest.raises(Conflict, match="is being verified"):
        authored_task_import(user=people.bob, path=EXAMPLE)
    fake_matrix(monkeypatch, MatrixStatus.KEPT)
    authored_task_verify(task_id=first.pk)
    with pytest.raises(Conflict, match="is kept already"):
        authored_task_import(user=people.bob, path=EXAMPLE)


def test_a_kept_task_becomes_a_kept_candidate_and_joins_its_behaviour(people, monkeypatch):
    behaviour = make_behaviour(BEHAVIOUR)
    row = authored_task_import(user=people.bob, path=EXAMPLE, behaviour_id=behaviour.pk)
    seen = fake_matrix(monkeypatch, MatrixStatus.KEPT)
    done = authored_task_verify(task_id=row.pk)
    assert seen == [row.task_dir], "the stored copy is what is verified"
    assert done.status == AuthoredTask.Status.KEPT and done.finished_at is not None
    assert [t["name"] for t in done.evidence["trials"]][-1] == "forge_reward_files"
    task = done.candidate
    assert (task.family, task.status, task.run, task.trajectory) == ("authored", "kept", None, None)
    assert (task.task_dir, task.task_name) == (row.task_dir, row.name)
    assert task.instruction.startswith("# Deploy the site")
    chosen = BehaviourTask.objects.get(behaviour=behaviour, candidate=task)
    assert chosen.split in (BehaviourTask.Split.TRAIN, BehaviourTask.Split.HELD_OUT)
    verdict = AuditEvent.objects.get(verb="authored_task.verify")
    assert verdict.after == {"status": "kept", "candidate": task.pk, "won": []}


def test_a_rejected_task_records_why_and_makes_no_kept_task(people, monkeypatch):
    behaviour = make_behaviour(BEHAVIOUR)
    row = authored_task_import(user=people.bob, path=EXAMPLE, behaviour_id=behaviour.pk)
    won = trial(Role.CONTROL, 1.0, name="forge_read_files")
    reason = "forge_read_files scored 1.0 (must be 0.0): no reason recorded"
    fake_matrix(monkeypatch, MatrixStatus.REJECTED, trials=(*KEPT, won), reasons=(reason,))
    done = authored_task_verify(task_id=row.pk)
    assert (done.status, done.reasons, done.candidate) == ("rejected", [reason], None)
    assert done.evidence["won"] == ["forge_read_files"]
    assert not Candidate.objects.exists() and not behaviour.tasks.exists()


def test_docker_failing_leaves_it_ungraded_until_it_is_verified_again(people, monkeypatch):
    row = authored_task_import(user=people.bob, path=EXAMPLE)
    down = (trial(Role.ORACLE, None),)
    fake_matrix(monkeypatch, MatrixStatus.UNGRADED, trials=down, reasons=("oracle #0 ungraded",))
    assert authored_task_verify(task_id=row.pk).status == AuthoredTask.Status.UNGRADED
    with pytest.raises(NotPermitted):
        authored_task_retry(user=people.alice, task_id=row.pk)
    again = authored_task_retry(user=people.bob, task_id=row.pk)
    assert again.status == AuthoredTask.Status.QUEUED
    with pytest.raises(Conflict, match="only ungraded ones are retried"):
        authored_task_retry(user=people.bob, task_id=row.pk)
    fake_matrix(monkeypatch, MatrixStatus.KEPT)
    assert authored_task_verify(task_id=row.pk).status == AuthoredTask.Status.KEPT


def test_a_task_is_verified_by_one_worker_only(people, monkeypatch):
    row = authored_task_import(user=people.bob, path=EXAMPLE)
    fake_matrix(monkeypatch, MatrixStatus.KEPT)
    assert authored_task_verify(task_id=row.pk) is not None
    assert authored_task_verify(task_id=row.pk) is None
    assert authored_task_verify(task_id=row.pk + 1) is None


def test_a_task_a_dead_worker_left_verifying_is_taken_over_after_its_containers_go(
    people, monkeypatch
):
    row = authored_task_import(user=people.bob, path=EXAMPLE)
    silent = timezone.now() - timedelta(minutes=5)
    AuthoredTask.objects.filter(pk=row.pk).update(
        status=AuthoredTask.Status.VERIFYING, started_at=silent, heartbeat_at=silent
    )
    engine = FakeEngine()
    removed_first: list[list[tuple[str, bool]]] = []

    def verify(task_dir, *, run_id, engine):
        removed_first.append(list(engine.cleanups))
        return AuthoredResult(str(task_dir), MatrixStatus.KEPT, KEPT, (), image="sha256:1")

    monkeypatch.setattr(service, "verify_authored_task", verify)
    assert authored_task_verify(task_id=row.pk, engine=engine).status == AuthoredTask.Status.KEPT
    # The label is the task's alone: every container under it was the dead attempt's.
    assert removed_first == [[(f"traj2env.run=authored-{row.pk}", True)]]


def test_a_harness_error_leaves_it_ungraded_and_is_raised(people, monkeypatch):
    row = authored_task_import(user=people.bob, path=EXAMPLE)

    def broken(task_dir, **_):
        raise RuntimeError("a bug in the matrix")

    monkeypatch.setattr(service, "verify_authored_task", broken)
    with pytest.raises(RuntimeError):
        authored_task_verify(task_id=row.pk)
    row.refresh_from_db()
    assert row.status == "ungraded" and row.reasons == ["harness error: a bug in the matrix"]


@pytest.fixture
def kept_authored(people, monkeypatch) -> Candidate:
    row = authored_task_import(user=people.bob, path=EXAMPLE)
    fake_matrix(monkeypatch, MatrixStatus.KEPT)
    return authored_task_verify(task_id=row.pk).candidate


def test_a_kept_authored_task_stays_off_the_review_desk_and_out_of_reverify(
    kept_authored, client, people
):
    assert not reviewable().filter(pk=kept_authored.pk).exists()
    assert not stale_kept().filter(pk=kept_authored.pk).exists()
    assert kept_authored.verifier_stale is False
    client.force_login(people.bob)
    assert client.get(f"/review/candidates/{kept_authored.pk}/").status_code == 404
    assert client.get("/review/").status_code == 200


class NoImages:
    """The Docker seam with no images at all: enough to show which grader was prepared."""

    def image(self, ref: str):
        return None


def test_regrading_a_authored_tasks_rollout_goes_through_its_own_tests_contract(
    kept_authored, tmp_path
):
    rollout = Rollout.objects.create(
        candidate=kept_authored, trial_name="t__1", agent="oracle", app_dir=str(tmp_path)
    )
    counts = rollouts_regrade(
        candidate_id=kept_authored.pk, rollout_ids=[rollout.pk], engine=NoImages()
    )
    rollout.refresh_from_db()
    assert counts["ungraded"] == 1 and rollout.reward is None
    assert "no such image in this Docker engine" in rollout.grade_detail["reason"]


def test_a_folder_path_over_path_max_is_refused_in_words(people):
    from groundwork.access.errors import Invalid

    with pytest.raises(Invalid, match="folder is 204,800 characters long; at most 4,096"):
        authored_task_import(user=people.bob, path="/" + "p" * 204_799)
    assert not AuthoredTask.objects.exists()


def test_a_folder_path_holding_a_nul_character_is_refused_in_words(people):
    from groundwork.access.errors import Invalid

    with pytest.raises(Invalid, match="folder holds a NUL character"):
        authored_task_import(user=people.bob, path="/srv/task\x00")
    assert not AuthoredTask.objects.exists()
