"""A pipeline run verified in Docker by two worker processes at once, over Redis and PostgreSQL,
each with its own DOCKER_HOST; one of them killed in the middle of a trial matrix."""

from __future__ import annotations

import secrets
import shutil
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from tasks_review.core.config import parse_config
from tasks_review.core.docker import Engine, InfraError, bootstrap
from tasks_review.core.docker import labels as lbl
from tasks_review.models import Candidate, PipelineRun, TrialRun
from tasks_review.services.images import base_image_spec
from tasks_review.services.pipeline import pipeline_run_create
from tasks_review.tasks import pipeline_run_enqueue
from tests.conftest import SAMPLES

from .conftest import HEARTBEAT_SECONDS, Worker, wait_for

pytestmark = [
    pytest.mark.scaleout,
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

# Two of the bundled samples, both Python projects checked with unittest: the quickest matrices.
SAMPLE_FILES = (
    "claude-code/8b2f9dbd-a47e-5bd1-b9e1-3dd76028ba6d.jsonl",
    "pi/2026-03-04T15-21-07-402Z_c00d24ac-25ac-59d5-a833-1b7e14d69b43.jsonl",
)
# This machine's engine, named two ways (/var/run is a link to /run on Debian).
DOCKER_HOSTS = ("unix:///var/run/docker.sock", "unix:///run/docker.sock")


@pytest.fixture(scope="module")
def engine() -> Engine:
    try:
        engine = Engine.from_env(timeout=60)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")
    for host in DOCKER_HOSTS:
        if not Path(host.removeprefix("unix://")).is_socket():
            pytest.skip(f"the engine's socket is not at {host}")
    # Built (or found) once here, so the workers never bootstrap it side by side.
    bootstrap(base_image_spec(), engine=engine)
    return engine


def _owners(engine: Engine, run_label: str, workers: list[Worker]) -> dict[str, set[int]]:
    """The run's containers by the worker whose process owns them (by process group)."""
    found: dict[str, set[int]] = {w.name: set() for w in workers}
    groups = {w.name: w.pids() for w in workers}
    for container in engine.containers(label=lbl.run_filter(run_label)):
        _host, _, rest = container.labels.get(lbl.OWNER, "").partition(":")
        pid = rest.partition(":")[0]
        for name, pids in groups.items():
            if pid.isdigit() and int(pid) in pids:
                found[name].add(int(pid))
    return found


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").partition("=")[::2] for item in raw if item)


def test_two_workers_verify_a_run_at_once_and_one_killed_mid_trial_is_taken_over(
    engine, workers, tmp_path
):
    source = tmp_path / "sessions"
    for name in SAMPLE_FILES:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / name, source / name)
    config = parse_config(
        {
            "source": {"path": str(source), "format": "auto"},
            "pipeline": {"name": "trajectory_to_env", "options": {"jobs": 2}},
            "output": {"destination": str(tmp_path / "out")},
        },
        base_dir=tmp_path,
    )
    a = workers("a", cluster="docker", DOCKER_HOST=DOCKER_HOSTS[0])
    b = workers("b", cluster="docker", DOCKER_HOST=DOCKER_HOSTS[1])
    # A run id no other test database uses: the run's containers are found by it, in an engine
    # other test runs share.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('tasks_review_pipelinerun', 'id'), %s)",
            [secrets.randbelow(10**9) + 10**9],
        )
    with transaction.atomic():  # queued on commit, through Redis, as the run page does
        run = pipeline_run_create(config=config)
        pipeline_run_enqueue(run.id)
    label = f"pipeline-{run.id}"
    try:
        # Both workers run trials of the run at the same moment, each under its own DOCKER_HOST.
        owners = wait_for(
            "both workers to run trials at once",
            lambda: (found := _owners(engine, label, [a, b]))["a"] and found["b"] and found,
            timeout=240,
        )
        for worker, host in ((a, DOCKER_HOSTS[0]), (b, DOCKER_HOSTS[1])):
            for pid in owners[worker.name]:
                assert _environ(pid).get("DOCKER_HOST") == host
        # Each lane holds one candidate (the killed worker's is one of the two), and both beat.
        wait_for(
            "both candidates to be taken and beating",
            lambda: (
                Candidate.objects.filter(
                    run=run,
                    status=Candidate.Status.VERIFYING,
                    heartbeat_at__gt=F("verify_started_at"),
                ).count()
                == 2
            ),
            timeout=30,
            every=0.2,
        )
        killed_at = timezone.now()
        a.kill()  # in the middle of a trial: its containers are still there
        assert _owners(engine, label, [a, b])["a"] == set()  # its processes are gone...
        assert engine.containers(label=lbl.run_filter(label))  # ...its containers are not

        done = wait_for(
            "the run to finish on the surviving worker",
            lambda: PipelineRun.objects.filter(id=run.id, finished_at__isnull=False).first(),
            timeout=420,
            every=1,
        )
        candidates = list(Candidate.objects.filter(run=run).order_by("id"))
        assert done.status == PipelineRun.Status.DONE, done.error or b.output()[-3000:]
        assert [c.status for c in candidates] == ["kept", "kept"], [
            c.verification for c in candidates
        ]
        assert done.counts["kept"] == 2 and done.counts["ungraded"] == 0
        # The killed worker's candidate was verified again after the kill, once the row went
        # silent for a few beats, and its trials are one matrix's: nothing recorded twice.
        assert sum(c.verify_started_at > killed_at for c in candidates) == 1
        for candidate in candidates:
            roles = Counter(
                TrialRun.objects.filter(candidate=candidate).values_list("role", "repeat")
            )
            assert roles and max(roles.values()) == 1, roles
            assert roles[("oracle", 0)] == roles[("oracle", 1)] == roles[("oracle", 2)] == 1
        # The dead worker's sandboxes were removed when its row was taken over; none is left.
        assert engine.containers(label=lbl.run_filter(label)) == []
        assert HEARTBEAT_SECONDS * 4 < (timezone.now() - killed_at).total_seconds()
    finally:  # a failed test leaves nothing of its run in the engine
        engine.cleanup(label=lbl.run_filter(label), include_live=True)
