"""Shared fixtures: the real corpus beside the checkout, and the four people of every view test;
and how the Docker tests share the two xdist workers."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TRAJ2ENV_CORPUS", REPO.parent / "shared" / "corpus"))


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items) -> None:
    """Each Docker test module is one xdist group (scripts/test.sh runs ``--dist loadgroup``):
    its module- and session-scoped fixtures (images built, tasks kept, runs graded) are then
    built by one worker, not once by each. Groups go out largest first and the single tests
    fill in around them. A module that shares such work with another names a group of its own."""
    for item in items:
        if item.get_closest_marker("docker") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if getattr(config.option, "loadgroup", False):
        _group_ids(items)


def _group_ids(items) -> None:
    """Give each grouped test the ``@group`` id suffix LoadGroupScheduling reads. xdist 3.8
    sets it through ``item._nodeid``, which pytest 9.2 no longer reads (a node's id is its
    ``_id``): without this, every group was scattered over both workers."""
    from _pytest.nodeid import NodeId

    for item in items:
        group = "_".join(
            sorted(
                {
                    str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                    for mark in item.iter_markers("xdist_group")
                }
            )
        )
        if group and not item.nodeid.endswith("@" + group):
            item._id = NodeId.parse(f"{item.nodeid}@{group}")


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The genuine public trajectories in ../shared/corpus; tests skip when they are absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not found at {CORPUS} (set TRAJ2ENV_CORPUS)")
    return CORPUS


@pytest.fixture
def people(db, settings):
    """alice annotates, bob reviews, carol approves, dave administers, and eve has no role."""
    # PBKDF2's deliberate slowness would cost seconds per test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    from django.contrib.auth.models import Group, User

    from groundwork.access.roles import ADMIN, ANNOTATOR, APPROVER, REVIEWER

    def make(name: str, role: str | None) -> User:
        user = User.objects.create_user(username=name, password="pw-" + name)
        if role:
            user.groups.add(Group.objects.get(name=role))
        return user

    class People:
        alice = make("alice", ANNOTATOR)
        bob = make("bob", REVIEWER)
        carol = make("carol", APPROVER)
        dave = make("dave", ADMIN)
        eve = make("eve", None)

    return People


@pytest.fixture
def as_annotator(client, people):
    client.force_login(people.alice)
    return client


@pytest.fixture
def ctrl_c():
    """SIGINT raises KeyboardInterrupt in the test, as Ctrl-C at a terminal does: a shell without
    job control starts its background commands with SIGINT ignored, and Python then leaves it
    ignored (a CI runner may well start the suite that way)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def unique_run_ids():
    """Pipeline run ids no other test database uses: a run's containers are labelled by its id
    in an engine that the other pytest-xdist worker (with its own database, counting from 1)
    shares, so a test that counts its run's containers would count the other's too."""
    import secrets

    from django.db import connection

    start = secrets.randbelow(10**9) + 10**9
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('tasks_review_pipelinerun', 'id'), %s)",
                [start],
            )
        else:  # SQLite's AUTOINCREMENT counter
            cursor.execute("DELETE FROM sqlite_sequence WHERE name = 'tasks_review_pipelinerun'")
            cursor.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('tasks_review_pipelinerun', %s)",
                [start],
            )


@pytest.fixture
def q_sync(monkeypatch):
    """Run django-q2 jobs inline, as the worker would, so a test sees their effect."""
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


SAMPLES = REPO / "samples"


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a program a test starts: without this test run's Django settings and
    plugin autoloading, which a pytest inside it (a grader under test) must not inherit."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env


def _remove_test_databases() -> None:
    """SQLite test databases (with their WAL files) of test processes that have ended: Django
    removes the file but not a WAL kept by a thread's open connection."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    name = db.get("TEST", {}).get("NAME")
    if db["ENGINE"] != "django.db.backends.sqlite3" or not name:
        return
    for path in Path(name).parent.glob("test-*.sqlite3*"):
        pid = path.name.removeprefix("test-").partition(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pytest_sessionstart(session: pytest.Session) -> None:
    _remove_test_databases()
