"""A docker worker, as its process starts, removes what dead workers of its host left on its own
engine: with several worker hosts, a reclaim elsewhere cannot prove those owners dead."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
from django_q.conf import Conf
from django_q.signals import post_spawn

from groundwork.core.docker import Engine, InfraError, bootstrap
from groundwork.core.docker import docker_labels as lbl
from groundwork.jobs import containers
from tasks_review.services.images import base_image_spec
from tests.conftest import REPO, subprocess_env

# A sandbox opened by a process of this host that then dies without cleaning up.
ORPHANING = """
import sys, time
from groundwork.core.docker import Engine
with Engine.from_env().sandbox(sys.argv[1], run_id=sys.argv[2]):
    print("up", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def started_in(monkeypatch):
    """Fire post_spawn as a worker process of cluster ``name`` does; the sweeps it asked for."""
    sweeps: list[dict] = []
    monkeypatch.setattr(containers, "dead_owner_containers_remove", lambda **kw: sweeps.append(kw))

    def start(name: str) -> list[dict]:
        monkeypatch.setattr(Conf, "CLUSTER_NAME", name)
        post_spawn.send(sender="django_q", proc_name="Process-test")
        return sweeps

    return start


def test_a_docker_worker_sweeps_its_engine_when_its_process_starts(started_in, settings):
    assert started_in(settings.Q_DOCKER_CLUSTER) == [{}]


def test_a_default_queue_worker_leaves_docker_alone(started_in, settings):
    assert started_in(settings.Q_CLUSTER["name"]) == []


def test_an_unreachable_engine_sweeps_nothing_and_the_worker_starts(monkeypatch):
    def unreachable(**_):
        raise InfraError("the Docker daemon at tcp://nowhere:2375 is unreachable")

    monkeypatch.setattr(containers.Engine, "from_env", unreachable)
    assert containers.dead_owner_containers_remove() is None


@pytest.mark.docker
def test_the_sweep_removes_a_dead_owners_containers_and_keeps_a_live_ones():
    try:
        engine = Engine.from_env(timeout=60)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")
    image = bootstrap(base_image_spec(), engine=engine).image_id
    run_id = f"test-sweep-{uuid.uuid4().hex[:12]}"  # nobody else's containers carry it
    dead = subprocess.Popen(
        [sys.executable, "-c", ORPHANING, image, run_id],
        cwd=REPO,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert dead.stdout is not None and dead.stdout.readline().strip() == "up"
        dead.kill()  # SIGKILL: its sandbox stays behind
        dead.wait(30)
        with engine.sandbox(image, run_id=run_id):  # a live worker's (this process's)
            label = lbl.run_filter(run_id)
            owners = {c.labels[lbl.OWNER] for c in engine.containers(label=label)}
            assert len(owners) == 2

            report = containers.dead_owner_containers_remove(engine=engine, label=label)

            assert report is not None and len(report.containers) == 1
            left = engine.containers(label=label)
            assert [c.labels[lbl.OWNER] for c in left] == [lbl.owner_token()]
    finally:
        dead.kill()
        engine.cleanup(label=lbl.run_filter(run_id), include_live=True)
