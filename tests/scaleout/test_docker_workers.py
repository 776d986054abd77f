"""A pipeline run verified in Docker by two worker processes at once, over Redis and PostgreSQL,
each with its own DOCKER_HOST; one of them killed in the middle of a trial matrix."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from django.db.models import F
from django.utils import timezone

from groundwork.core.docker import Engine, InfraError, bootstrap
from groundwork.core.docker import docker_labels as lbl
from groundwork.jobs.heartbeat import STALE_BEATS
from tasks_review.core.config import parse_config
from tasks_review.models import Candidate, PipelineRun, TrialRun
from tasks_review.services.images import base_image_spec
from tasks_review.services.pipeline import pipeline_run_create
from tasks_review.tasks import pipeline_run_job, pipeline_verify_enqueue
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
HOSTS = {"a": DOCKER_HOSTS[0], "b": DOCKER_HOSTS[1]}


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
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # it has just ended
        return {}
    return dict(item.decode(errors="replace").partition("=")[::2] for item in raw if item)


def test_two_workers_verify_a_run_at_once_and_one_killed_mid_trial_is_taken_over(
    engine, workers, tmp_path, unique_run_ids
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
    run = pipeline_run_create(config=config)
    label = f"pipeline-{run.id}"
    try:
        # The run's own job here, up to verify: it queues the run's two lanes through Redis.
        # django-q2's pusher pulls jobs while its worker works, up to two beyond the one in hand,
        # so one worker may hold both lanes and leave the other idle: two more lanes give each
        # worker one whatever the pushers do (a lane with nothing left to take just ends).
        assert pipeline_run_job(run.id).startswith("verifying 2 candidates in 2 lanes")
        for _ in range(2):
            pipeline_verify_enqueue(run.id)
        # Both workers verify a candidate of the run at once (each row beating under its own
        # worker), each running its trials under its own DOCKER_HOST. Worker a is killed once it
        # is in the middle of its trials. (Whose trials start first depends on the image builds,
        # so b's may be over by then: what b ran is recorded as it goes.)
        seen: dict[str, set[int]] = {"a": set(), "b": set()}
        verifying = Candidate.objects.filter(
            run=run, status=Candidate.Status.VERIFYING, heartbeat_at__gt=F("verify_started_at")
        )
        both_verifying = False

        def observe() -> dict[str, set[int]]:
            """The run's trial processes now, by worker; and what each ran so far, and where."""
            nonlocal both_verifying
            both_verifying = both_verifying or verifying.count() == 2
            found = _owners(engine, label, [a, b])
            for name, pids in found.items():
                seen[name] |= {p for p in pids if _environ(p).get("DOCKER_HOST") == HOSTS[name]}
            return found

        wait_for(
            "worker a to be mid-trial while b verifies",
            lambda: bool(observe()["a"]) and both_verifying,
            timeout=300,
            every=0.2,
        )
        killed_at = timezone.now()
        a.kill()  # in the middle of a trial: its containers are still there
        assert observe()["a"] == set()  # its processes are gone...
        assert engine.containers(label=lbl.run_filter(label))  # ...its containers are not
        wait_for("worker b to run trials", lambda: observe()["b"] or seen["b"], timeout=300)
        assert seen["a"] and seen["b"], "each worker ran trials under its own DOCKER_HOST"

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
        (retaken,) = [c for c in candidates if c.verify_started_at > killed_at]
        # ...not before its row had been silent for most of four beats (it beat just before).
        silent = (retaken.verify_started_at - killed_at).total_seconds()
        assert silent > HEARTBEAT_SECONDS * (STALE_BEATS - 1), silent
        for candidate in candidates:
            roles = Counter(
                TrialRun.objects.filter(candidate=candidate).values_list("role", "repeat")
            )
            assert roles and max(roles.values()) == 1, roles
            assert roles[("oracle", 0)] == roles[("oracle", 1)] == roles[("oracle", 2)] == 1
        # The dead worker's sandboxes were removed when its row was taken over; none is left.
        assert engine.containers(label=lbl.run_filter(label)) == []
    finally:  # a failed test leaves nothing of its run in the engine
        engine.cleanup(label=lbl.run_filter(label), include_live=True)
