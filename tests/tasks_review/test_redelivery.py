"""The desk's lost jobs are queued again: a run whose own job died (or never started), a verify
stage with no lane left, a finished run's retry whose worker died, and a dataset export left
running by a dead worker or waiting too long; jobs in good health are left alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from tasks_review import tasks
from tasks_review.models import Candidate, DatasetExport, PipelineRun
from tests.tasks_review.factories import make_candidate, make_run

pytestmark = pytest.mark.django_db
R, C = PipelineRun.Status, Candidate.Status


@pytest.fixture(autouse=True)
def _fresh_marks():
    from django.core.cache import cache

    cache.clear()


def ago(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


def docker_limit() -> int:
    return int(settings.Q_CLUSTER["ALT_CLUSTERS"][settings.Q_DOCKER_CLUSTER]["timeout"])


def beats(n: float) -> float:
    return n * float(settings.TRAJ2ENV["HEARTBEAT_SECONDS"])


def swept(capture) -> tuple[str, list[tuple]]:
    """The sweep's result and the jobs it handed the broker, as (function, *arguments)."""
    with capture() as callbacks:
        result = tasks.redeliver_job()
    return result, [(c.args, c.keywords.get("cluster")) for c in callbacks]


def run(**fields) -> PipelineRun:
    row = make_run()
    PipelineRun.objects.filter(pk=row.pk).update(**fields)
    row.refresh_from_db()
    return row


def test_a_run_whose_own_job_died_before_verify_is_queued_again_on_the_docker_queue(
    django_capture_on_commit_callbacks,
):
    dead = run(status=R.RUNNING, stage="mine", started_at=ago(600), heartbeat_at=ago(beats(5)))
    result, jobs = swept(django_capture_on_commit_callbacks)
    assert jobs == [(("tasks_review.tasks.pipeline_run_job", dead.pk), "docker")]
    assert result == f"queued again: 1 pipeline runs ({dead.pk})"


def test_a_run_queued_longer_than_the_docker_limit_is_queued_again_unless_cancelled(
    django_capture_on_commit_callbacks,
):
    lost = run(status=R.QUEUED)
    cancelled = run(status=R.QUEUED, cancel_requested=True)
    fresh = run(status=R.QUEUED)
    old = ago(docker_limit() + 1)
    PipelineRun.objects.filter(pk__in=[lost.pk, cancelled.pk]).update(created_at=old)
    _, jobs = swept(django_capture_on_commit_callbacks)
    assert [args for args, _ in jobs] == [("tasks_review.tasks.pipeline_run_job", lost.pk)]
    assert fresh.pk not in {args[1] for args, _ in jobs}


def test_a_verify_stage_with_no_lane_left_gets_a_lane(django_capture_on_commit_callbacks):
    verifying = dict(status=R.RUNNING, stage="verify", stage_started_at=ago(beats(10)))
    orphaned = run(**verifying)
    make_candidate(run=orphaned, status=C.WRITTEN, trials=False)
    make_candidate(
        run=orphaned,
        status=C.VERIFYING,
        verify_started_at=ago(beats(9)),
        heartbeat_at=ago(beats(5)),  # its worker died
        trials=False,
    )
    _, jobs = swept(django_capture_on_commit_callbacks)
    assert jobs == [(("tasks_review.tasks.pipeline_verify_job", orphaned.pk), "docker")]


def test_a_verify_stage_with_a_live_lane_or_nothing_left_is_left_alone(
    django_capture_on_commit_callbacks,
):
    verifying = dict(status=R.RUNNING, stage="verify", stage_started_at=ago(beats(10)))
    live = run(**verifying)
    make_candidate(run=live, status=C.WRITTEN, trials=False)
    make_candidate(
        run=live,
        status=C.VERIFYING,
        verify_started_at=ago(beats(2)),
        heartbeat_at=ago(beats(1)),
        trials=False,
    )
    done = run(**verifying)
    make_candidate(run=done, status=C.KEPT, trials=False)
    just_started = run(status=R.RUNNING, stage="verify", stage_started_at=ago(1))
    make_candidate(run=just_started, status=C.WRITTEN, trials=False)
    assert swept(django_capture_on_commit_callbacks) == ("nothing lost", [])


def test_a_finished_runs_retry_whose_worker_died_is_queued_again(
    django_capture_on_commit_callbacks,
):
    finished = run(status=R.DONE, finished_at=ago(3600))
    retried = make_candidate(
        run=finished,
        status=C.VERIFYING,
        verify_started_at=ago(beats(8)),
        heartbeat_at=ago(beats(5)),
        trials=False,
    )
    make_candidate(
        run=finished,
        status=C.VERIFYING,
        verify_started_at=ago(beats(2)),
        heartbeat_at=ago(beats(1)),
        trials=False,
    )  # alive: its retry still runs
    _, jobs = swept(django_capture_on_commit_callbacks)
    expected = ("tasks_review.tasks.candidate_retry_job", finished.pk, retried.pk)
    assert jobs == [(expected, "docker")]


def test_a_run_beating_or_finished_is_left_alone(django_capture_on_commit_callbacks):
    run(status=R.RUNNING, stage="mine", started_at=ago(600), heartbeat_at=ago(beats(1)))
    run(status=R.DONE, stage="verify", finished_at=ago(60))
    run(status=R.FAILED, finished_at=ago(60), heartbeat_at=ago(beats(50)))
    assert swept(django_capture_on_commit_callbacks) == ("nothing lost", [])


def test_a_dataset_export_left_running_by_a_dead_worker_is_queued_again_on_the_default_queue(
    django_capture_on_commit_callbacks,
):
    X = DatasetExport.Status
    dead = DatasetExport.objects.create(
        path="/tmp/x", status=X.RUNNING, started_at=ago(600), heartbeat_at=ago(beats(5))
    )
    live = DatasetExport.objects.create(
        path="/tmp/y", status=X.RUNNING, started_at=ago(600), heartbeat_at=ago(beats(1))
    )
    waiting = DatasetExport.objects.create(path="/tmp/z")
    DatasetExport.objects.filter(pk=waiting.pk).update(
        created_at=ago(int(settings.Q_CLUSTER["timeout"]) + 1)
    )
    result, jobs = swept(django_capture_on_commit_callbacks)
    default = settings.Q_CLUSTER["name"]
    assert jobs == [
        (("tasks_review.tasks.dataset_export_job", dead.pk), default),
        (("tasks_review.tasks.dataset_export_job", waiting.pk), default),
    ]
    assert live.pk not in {args[1] for args, _ in jobs}
    assert result == f"queued again: 2 dataset exports ({dead.pk}, {waiting.pk})"
