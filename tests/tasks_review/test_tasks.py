"""The pipeline's django-q2 jobs: which queue they land on, what they queue next, rows deleted
under them, and the rule that only an app's tasks module enqueues."""

from __future__ import annotations

import ast
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from tasks_review import tasks
from tasks_review.core.trials.model import MatrixResult, MatrixStatus
from tasks_review.models import Candidate, DatasetExport, PipelineRun
from tasks_review.services import verification
from tasks_review.services.pipeline import pipeline_verify_next
from tests.processes import stop_group
from tests.trajectories.factories import make_trajectory

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parents[2]
CONFIG = {
    "source": {"kind": "trajectory", "path": "/data/logs", "format": "auto"},
    "pipeline": {"name": "trajectory_to_env", "options": {"families": ["repair"], "jobs": 2}},
}


def queued() -> list[tuple[str, str]]:
    """(queue, job) of every job waiting in the ORM broker."""
    return [(row.key, row.task["func"]) for row in OrmQ.objects.order_by("id")]


def make_run(tmp_path: Path, **fields) -> PipelineRun:
    return PipelineRun.objects.create(config=CONFIG, destination=str(tmp_path), **fields)


def make_written(run: PipelineRun, tmp_path: Path, n: int) -> list[Candidate]:
    return [
        Candidate.objects.create(
            run=run,
            trajectory=make_trajectory(),
            family="repair",
            key=f"k{i}",
            check_command="npm test",
            status="written",
            fail_step=2,
            pass_step=5,
            task_dir=str(tmp_path / f"t{i}"),
        )
        for i in range(n)
    ]


# -- queues ----------------------------------------------------------------------------------------


def test_docker_work_lands_on_the_docker_clusters_queue(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    run = make_run(tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.pipeline_run_enqueue(run.id)
        tasks.pipeline_verify_enqueue(run.id)
        tasks.candidate_retry_enqueue(run.id, 7)
    assert settings.Q_DOCKER_CLUSTER == "docker"
    assert queued() == [
        ("docker", "tasks_review.tasks.pipeline_run_job"),
        ("docker", "tasks_review.tasks.pipeline_verify_job"),
        ("docker", "tasks_review.tasks.candidate_retry_job"),
    ]


def test_an_export_lands_on_the_default_queue(django_capture_on_commit_callbacks):
    export = DatasetExport.objects.create(path="/tmp/x")
    with django_capture_on_commit_callbacks(execute=True):
        tasks.dataset_export_enqueue(export.id)
    assert queued() == [("traj2env", "tasks_review.tasks.dataset_export_job")]


def test_nothing_is_queued_before_the_transaction_commits(
    tmp_path, django_capture_on_commit_callbacks
):
    run = make_run(tmp_path)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        tasks.pipeline_run_enqueue(run.id)
    assert len(callbacks) == 1 and queued() == []


ENQUEUE_BOTH = (
    "from tasks_review.tasks import pipeline_verify_enqueue; "
    "from trajectories.tasks import replays_enqueue; "
    "pipeline_verify_enqueue(41); replays_enqueue([42])"
)


@pytest.mark.slow
def test_a_docker_worker_takes_docker_jobs_and_leaves_replays_to_the_default_one(tmp_path):
    # A real worker process on a database of its own: the settings django-q2 reads at start-up
    # decide which queue it serves.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("Q_", "DATABASE_URL"))}
    env.update(TRAJ2ENV_VAR=str(tmp_path), DJANGO_SETTINGS_MODULE="project.settings")
    manage = [sys.executable, "manage.py"]
    for command in (["migrate", "-v", "0"], ["shell", "-c", ENQUEUE_BOTH]):
        subprocess.run(manage + command, cwd=REPO, env=env, check=True, capture_output=True)
    database = tmp_path / "traj2env.sqlite3"

    def rows(sql: str) -> list[tuple]:
        with sqlite3.connect(database) as db:
            return db.execute(sql).fetchall()

    assert sorted(rows("select key from django_q_ormq")) == [("docker",), ("traj2env",)]
    worker = subprocess.Popen(
        [*manage, "qcluster"],
        cwd=REPO,
        env={**env, "Q_CLUSTER_NAME": "docker"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the stop reaches its forks too
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not rows("select id from django_q_task"):
            time.sleep(0.5)
        done = rows("select func, cluster, success from django_q_task")
    finally:
        stop_group(worker, sig=signal.SIGINT)
    assert done == [("tasks_review.tasks.pipeline_verify_job", "docker", 1)]
    assert rows("select key from django_q_ormq") == [("traj2env",)]  # the replay still waits


# -- what comes next -------------------------------------------------------------------------------


def test_a_verify_lane_says_what_comes_next_and_its_job_queues_it(
    tmp_path, monkeypatch, settings, django_capture_on_commit_callbacks
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "VERIFY": True}
    monkeypatch.setattr(
        verification,
        "verify_task",
        lambda task_dir, **_: MatrixResult(task_dir=task_dir, status=MatrixStatus.KEPT),
    )
    run = make_run(tmp_path, status="running", stage="verify", stage_total=3)
    make_written(run, tmp_path, 3)

    with django_capture_on_commit_callbacks(execute=True):
        step = pipeline_verify_next(run_id=run.id)
    assert step.lanes == 1 and "more to verify" in step.summary
    assert queued() == []  # the service says so; it queues nothing itself

    with django_capture_on_commit_callbacks(execute=True):
        summary = tasks.pipeline_verify_job(run.id)
    assert "more to verify" in summary
    assert queued() == [("docker", "tasks_review.tasks.pipeline_verify_job")]

    with django_capture_on_commit_callbacks(execute=True):
        summary = tasks.pipeline_verify_job(run.id)  # the last candidate: the lane ends the run
    assert summary == "finished the run (done)" and len(queued()) == 1
    run.refresh_from_db()
    assert run.status == "done" and run.counts["kept"] == 3


def test_a_lane_with_nothing_to_take_watches_and_takes_over_a_candidate_gone_silent(
    tmp_path, monkeypatch, settings
):
    # Redis hands a job out once: a killed worker's lane is gone, and only a lane still running
    # can verify its candidate.
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "VERIFY": True, "HEARTBEAT_SECONDS": 1}
    monkeypatch.setattr(
        verification,
        "verify_task",
        lambda task_dir, **_: MatrixResult(task_dir=task_dir, status=MatrixStatus.KEPT),
    )
    run = make_run(tmp_path, status="running", stage="verify", stage_total=1)
    (candidate,) = make_written(run, tmp_path, 1)
    now = timezone.now()
    held = Candidate.objects.filter(id=candidate.id)
    held.update(status="verifying", verify_started_at=now, heartbeat_at=now)

    step = pipeline_verify_next(run_id=run.id)  # another lane's, beating: watched, not taken
    assert step.lanes == 1 and "watching" in step.summary
    assert held.get().status == "verifying"

    held.update(heartbeat_at=now - timedelta(seconds=10))  # its worker died
    step = pipeline_verify_next(run_id=run.id)
    assert step.summary == "finished the run (done)"
    assert held.get().status == "kept"
    run.refresh_from_db()
    assert run.status == "done" and run.counts["kept"] == 1


# -- deleted rows ----------------------------------------------------------------------------------


def test_a_run_job_whose_run_is_gone_says_so(tmp_path):
    run = make_run(tmp_path)
    run.delete()
    assert tasks.pipeline_run_job(run.id) == f"pipeline run {run.id} is gone"


def test_a_verify_job_whose_run_is_gone_says_so(tmp_path):
    run = make_run(tmp_path, status="running", stage="verify")
    run.delete()
    assert tasks.pipeline_verify_job(run.id) == f"pipeline run {run.id} is gone"


def test_a_verify_job_whose_run_is_deleted_during_the_matrix_says_so(tmp_path, monkeypatch):
    run = make_run(tmp_path, status="running", stage="verify", stage_total=1)
    make_written(run, tmp_path, 1)

    def matrix_then_deleted(task_dir, **_):
        PipelineRun.objects.filter(id=run.id).delete()  # with its candidates
        return MatrixResult(task_dir=task_dir, status=MatrixStatus.KEPT)

    monkeypatch.setattr(verification, "verify_task", matrix_then_deleted)
    result = tasks.pipeline_verify_job(run.id)
    assert result == f"pipeline run {run.id} was deleted while its job ran"
    assert not Candidate.objects.exists()


def test_a_retry_job_whose_run_is_deleted_during_the_matrix_says_so(tmp_path, monkeypatch):
    run = make_run(tmp_path, status="done")
    (candidate,) = make_written(run, tmp_path, 1)
    Candidate.objects.filter(id=candidate.id).update(status="ungraded")

    def matrix_then_deleted(task_dir, **_):
        PipelineRun.objects.filter(id=run.id).delete()
        return MatrixResult(task_dir=task_dir, status=MatrixStatus.KEPT)

    monkeypatch.setattr(verification, "verify_task", matrix_then_deleted)
    result = tasks.candidate_retry_job(run.id, candidate.id)
    assert result == f"pipeline run {run.id} was deleted while its job ran"


def test_a_retry_job_whose_candidate_is_gone_only_refreshes_the_run(tmp_path):
    run = make_run(tmp_path, status="done", counts={"kept": 0, "ungraded": 1})
    assert tasks.candidate_retry_job(run.id, 999_999) == "candidate 999999: not claimable"
    run.refresh_from_db()
    assert run.counts["ungraded"] == 0 and (tmp_path / "report.json").exists()


def test_an_export_job_whose_export_is_gone_says_so():
    export = DatasetExport.objects.create(path="/tmp/x")
    export.delete()
    assert tasks.dataset_export_job(export.id) == f"dataset export {export.id} is gone"


def test_a_job_that_fails_while_its_row_still_exists_still_raises(tmp_path, monkeypatch):
    # Tolerating deletion must not hide a real bug: django-q2 records it and retries.
    run = make_run(tmp_path, status="running", stage="verify")

    def broken(*, run_id):
        raise RuntimeError("bug in the lane")

    monkeypatch.setattr(tasks, "pipeline_verify_next", broken)
    with pytest.raises(RuntimeError, match="bug in the lane"):
        tasks.pipeline_verify_job(run.id)


# -- one module enqueues ---------------------------------------------------------------------------

APPS = ("trajectories", "tasks_review", "training")


def _modules() -> list[Path]:
    return sorted(
        path
        for app in APPS
        for path in (REPO / app).rglob("*.py")
        if "migrations" not in path.parts
    )


def _imports(path: Path) -> set[str]:
    """Every module and name a file imports, as dotted paths (``a.b`` and ``a.b.name``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            package = ".".join(path.relative_to(REPO).with_suffix("").parts[: -node.level])
            base = node.module or ""
            if node.level:
                base = f"{package}.{base}" if base else package
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_only_the_queue_module_enqueues_and_only_each_apps_tasks_module_calls_it():
    modules = [*_modules(), *sorted((REPO / "groundwork").rglob("*.py"))]
    enqueuing = {
        path.relative_to(REPO).as_posix()
        for path in modules
        if "django_q.tasks.async_task" in _imports(path)
    }
    assert enqueuing == {"groundwork/jobs/queue.py"}
    calling = {
        path.relative_to(REPO).as_posix()
        for path in modules
        if "groundwork.jobs.queue.enqueue_on_commit" in _imports(path)
    }
    assert calling == {"tasks_review/tasks.py", "trajectories/tasks.py", "training/tasks.py"}


def test_services_import_neither_jobs_nor_commands():
    offenders = {
        f"{path.relative_to(REPO)} imports {name}"
        for path in _modules()
        if "services" in path.relative_to(REPO).with_suffix("").parts
        for name in _imports(path)
        if any(name.startswith((f"{app}.tasks", f"{app}.management")) for app in APPS)
    }
    assert offenders == set()
