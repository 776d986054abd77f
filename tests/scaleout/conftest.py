"""The scale-out suite's ground: PostgreSQL, Redis and real worker processes.

Every test here runs only against a PostgreSQL database (``DATABASE_URL``) and a Redis broker
(``Q_REDIS_URL``); scripts/test.sh's second run starts both on loopback. Without them the tests
skip and say which is missing; when the script started them (``TRAJ2ENV_SCALEOUT_REQUIRED``),
an unanswering one fails the tests instead, so CI cannot pass with the suite skipped.

Worker processes are ``manage.py qcluster``, each in a process group of its own, so a SIGKILL
takes the whole cluster at once (sentinel, pusher, monitor and workers), as when a host dies.
They reach the test database by its name and beat every second (``TRAJ2ENV_HEARTBEAT_SECONDS``),
so a killed worker's row is reclaimed in seconds rather than minutes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from tests.conftest import REPO, subprocess_env
from tests.processes import group_pids, stop_group

HEARTBEAT_SECONDS = 1


def _unavailable() -> str | None:
    """Why the scale-out services cannot be used here, or None."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        return (
            f"the scale-out suite needs PostgreSQL, and DATABASE_URL names {db['ENGINE']} "
            "(scripts/test.sh starts one; or set DATABASE_URL=postgres://... and Q_REDIS_URL)"
        )
    redis_url = os.environ.get("Q_REDIS_URL", "")
    if not redis_url:
        return "the scale-out suite needs Redis: Q_REDIS_URL is not set (scripts/test.sh sets it)"
    import psycopg
    import redis

    try:
        psycopg.connect(
            host=db["HOST"] or None,
            port=db["PORT"] or None,
            user=db["USER"] or None,
            password=db["PASSWORD"] or None,
            dbname="postgres",
            connect_timeout=5,
        ).close()
    except psycopg.Error as exc:
        return f"PostgreSQL at {db['HOST']}:{db['PORT']} does not answer: {exc}"
    try:
        redis.from_url(redis_url, socket_connect_timeout=5).ping()
    except redis.RedisError as exc:
        return f"Redis at {redis_url} does not answer: {exc}"
    return None


@pytest.fixture(scope="session", autouse=True)
def scaleout_services() -> None:
    """Session-wide and first: before pytest-django tries to create the test database."""
    why = _unavailable()
    if why is None:
        return
    if os.environ.get("TRAJ2ENV_SCALEOUT_REQUIRED") == "1":
        pytest.fail(f"scripts/test.sh started the scale-out services, yet {why}", pytrace=False)
    pytest.skip(why)


@pytest.fixture
def broker() -> Iterator[None]:
    """An empty Redis database for the test: jobs a killed worker never took stay there."""
    import redis

    client = redis.from_url(os.environ["Q_REDIS_URL"])
    client.flushdb()
    yield
    client.flushdb()


def worker_database_url() -> str:
    """DATABASE_URL with the test database's name: what a worker process connects to."""
    from django.db import connection

    db = connection.settings_dict
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + quote(db["NAME"])))


class Worker:
    """One ``manage.py qcluster`` serving ``cluster`` with one worker process, its output in
    ``log``. ``env`` adds to (or overrides) the test's own environment."""

    def __init__(self, name: str, *, cluster: str, log_dir: Path, **env: str) -> None:
        self.name = name
        self.log = log_dir / f"worker-{name}.log"
        self.env = subprocess_env(
            DJANGO_SETTINGS_MODULE="project.settings",
            DATABASE_URL=worker_database_url(),
            Q_CLUSTER_NAME=cluster,
            Q_WORKERS="1",
            Q_DOCKER_WORKERS="1",
            TRAJ2ENV_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
            PYTHONUNBUFFERED="1",
            **env,
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Worker:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "qcluster"],
                cwd=REPO,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: one signal reaches them all
            )
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None, "the worker was never started"
        return self.process.pid

    def pids(self) -> set[int]:
        """Every live process of this worker's group (qcluster forks its workers)."""
        return group_pids(self.pid)

    def kill(self) -> None:
        """SIGKILL the whole cluster at once: nothing of it gets to clean up."""
        os.killpg(self.pid, signal.SIGKILL)
        assert self.process is not None
        self.process.wait(30)
        wait_for(f"worker {self.name}'s processes to end", lambda: not self.pids(), timeout=30)

    def stop(self) -> None:
        """Ask the cluster to stop (its workers finish the job in hand), then make sure: its
        main process can hang in its own signal handler (django-q2 #346)."""
        if self.process is None or self.process.poll() is not None:
            return
        stop_group(self.process, sig=signal.SIGINT)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@pytest.fixture
def workers(tmp_path, broker) -> Iterator[Callable[..., Worker]]:
    """Start worker processes; every one is stopped when the test ends, killed if need be."""
    started: list[Worker] = []

    def start(name: str, *, cluster: str, **env: str) -> Worker:
        worker = Worker(name, cluster=cluster, log_dir=tmp_path, **env).start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def wait_for(what: str, condition: Callable[[], object], *, timeout: float, every: float = 0.5):
    """Poll ``condition`` until it is truthy (and return it), or fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:.0f} s for {what}", pytrace=False)
        time.sleep(every)
