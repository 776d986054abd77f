"""Services a check needs: Redis and PostgreSQL run beside it; others drop it at mine."""

from __future__ import annotations

import shlex

import pytest

from tasks_review.core.mining import DropReason
from tasks_review.core.mining.service_needs import (
    check_needs,
    client_need,
    config_needs,
    env_needs,
    output_needs,
    starts_service,
)

from .repair_helpers import Session, assert_drop, check_story

# -- each signal, and the near-misses beside it ----------------------------------------------


@pytest.mark.parametrize(
    "command, service, host",
    [
        ("redis-cli FLUSHDB", "redis", ""),
        ("redis-cli -h 127.0.0.1 -p 6379 PING", "redis", "127.0.0.1"),
        ("redis-cli -u redis://cache.internal:6379/0 PING", "redis", "cache.internal"),
        ("psql -c 'select 1' app_test", "postgresql", ""),
        ("psql -h db.example.com -U app", "postgresql", "db.example.com"),
        ("psql --host=localhost", "postgresql", "localhost"),
        ("psql postgresql://app@pg.prod:5432/app", "postgresql", "pg.prod"),
        ("psql 'host=warehouse dbname=app'", "postgresql", "warehouse"),
        ("pg_isready", "postgresql", ""),
        ("createdb calc_test", "postgresql", ""),
        ("sudo -u postgres createuser -s me", "postgresql", ""),
        ("mysql -e 'create database t'", "mysql", ""),
        ("mongosh --eval 'db.dropDatabase()'", "mongodb", ""),
    ],
)
def test_a_client_command_names_its_service_and_host(command, service, host):
    need = client_need(shlex.split(command), {})
    assert need is not None and (need.service, need.host) == (service, host)


def test_pghost_points_psql_at_its_host():
    need = client_need(["psql", "-c", "select 1"], {"PGHOST": "db"})
    assert need is not None and not need.provided and need.describe() == "postgresql on db"


@pytest.mark.parametrize(
    "command",
    [
        "echo redis-cli FLUSHDB",
        "pip install redis psycopg2-binary",
        "grep -rn redis-cli README.md",
        "redis-cli --version",
        "psql --help",
        "python -c 'import redis'",
        "apt-get install -y redis-server",
    ],
)
def test_commands_that_only_mention_a_service_are_no_client(command):
    assert client_need(command.split(), {}) is None
    assert starts_service(command.split()) is None


@pytest.mark.parametrize(
    "command, service",
    [
        ("redis-server --daemonize yes", "redis"),
        ("redis-server", "redis"),
        ("service redis-server start", "redis"),
        ("sudo service postgresql start", "postgresql"),
        ("systemctl start postgresql@15-main", "postgresql"),
        ("brew services start redis", "redis"),
        ("pg_ctl -D /usr/local/var/postgres start", "postgresql"),
        ("pg_ctlcluster 15 main start", "postgresql"),
        ("service mysql start", "mysql"),
        ("mongod --fork --logpath /tmp/m.log", "mongodb"),
    ],
)
def test_a_command_that_starts_a_server_names_its_service(command, service):
    assert starts_service(command.split()) == service


@pytest.mark.parametrize(
    "command", ["pg_ctl -D data stop", "service redis-server stop", "brew services list"]
)
def test_stopping_or_listing_servers_starts_nothing(command):
    assert starts_service(command.split()) is None


@pytest.mark.parametrize(
    "output, service, host",
    [
        ("Could not connect to Redis at 127.0.0.1:6379: Connection refused", "redis", "127.0.0.1"),
        (
            "E   redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. "
            "Connection refused.",
            "redis",
            "localhost",
        ),
        (
            "redis.exceptions.ConnectionError: Error -2 connecting to redis:6380. Name or "
            "service not known.",
            "redis",
            "redis",
        ),
        ("[ioredis] Unhandled error event: Error: connect ECONNREFUSED 127.0.0.1:6379", "redis",
         "127.0.0.1"),
        ("dial tcp [::1]:6379: connect: connection refused", "redis", "[::1]"),
        ("ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 6379)", "redis",
         "127.0.0.1"),
        (
            'psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", '
            "port 5432 failed: Connection refused",
            "postgresql",
            "127.0.0.1",
        ),
        (
            'connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: No such '
            "file or directory",
            "postgresql",
            "",
        ),
        (
            "django.db.utils.OperationalError: could not connect to server: Connection refused\n"
            '\tIs the server running on host "localhost" (127.0.0.1) and accepting',
            "postgresql",
            "localhost",
        ),
        ("E       psycopg2.OperationalError: FATAL:  database \"t\" does not exist", "postgresql",
         ""),
        ("FAILED tests/test_db.py::test_x - psycopg2.OperationalError: server closed",
         "postgresql", ""),
        ("Error: connect ECONNREFUSED 127.0.0.1:5432", "postgresql", "127.0.0.1"),
        ("localhost:5432 - no response", "postgresql", "localhost"),
        ("ERROR 2003 (HY000): Can't connect to MySQL server on 'db' (111)", "mysql", "db"),
        ("pymongo.errors.ServerSelectionTimeoutError: localhost:27017: [Errno 111] Connection "
         "refused", "mongodb", "localhost"),
    ],
)  # fmt: skip
def test_connection_errors_in_output_name_the_service_and_host(output, service, host):
    found = {(n.service, n.host) for n in output_needs(output, "in the output")}
    assert (service, host) in found


@pytest.mark.parametrize(
    "output",
    [
        "tests/test_cache.py::test_redis_key_format PASSED",
        "E       AssertionError: assert 'redis://localhost:6379/1' == 'redis://localhost:6379/0'",
        "test_psycopg2_operationalerror_is_retried FAILED",
        "requests.exceptions.ConnectionError: ... port=8000): Connection refused",
        "Error: connect ECONNREFUSED 127.0.0.1:3000",
        "sqlite3.OperationalError: no such table: users",
        "django.db.utils.OperationalError: no such table: app_user",
        "ModuleNotFoundError: No module named 'redis'",
        "1 passed, 1 warning: redis-py 5.0 deprecates ...",
    ],
)
def test_outputs_that_only_mention_a_service_show_no_need(output):
    assert output_needs(output, "in the output") == []


@pytest.mark.parametrize(
    "env, needs",
    [
        ({"REDIS_URL": "redis://localhost:6379/0"}, [("redis", "localhost", True)]),
        ({"CACHE": "rediss://cache.example.com:6380"}, [("redis", "cache.example.com", False)]),
        ({"DATABASE_URL": "postgres://app:pw@localhost/app"}, [("postgresql", "localhost", True)]),
        ({"DATABASE_URL": "postgresql+psycopg2:///app"}, [("postgresql", "", True)]),
        ({"DATABASE_URL": "mysql://localhost/app"}, [("mysql", "localhost", False)]),
        ({"MONGO_URL": "mongodb+srv://cluster0.example.net/app"},
         [("mongodb", "cluster0.example.net", False)]),
        ({"PGHOST": "localhost"}, [("postgresql", "localhost", True)]),
        ({"REDIS_HOST": "redis"}, [("redis", "redis", False)]),
        ({"DATABASE_URL": "postgres://$DB_HOST/app"}, []),
        ({"DATABASE_URL": "sqlite:///db.sqlite3"}, []),
        ({"API_URL": "http://localhost:8000"}, []),
    ],
)  # fmt: skip
def test_service_urls_and_hosts_in_the_environment(env, needs):
    assert [(n.service, n.host, n.provided) for n in env_needs(env, "here")] == needs


def test_the_projects_test_environment_adds_local_services_only():
    files = {
        ".env": b"DEBUG=1\nexport REDIS_URL=redis://localhost:6379/1\nDATABASE_URL=postgres://db.prod/app\n",
        "pytest.ini": b"[pytest]\nenv =\n    D:CELERY_BROKER=redis://127.0.0.1:6379/2\n",
        "pyproject.toml": b'[tool.pytest.ini_options]\nenv = ["DATABASE_URL=postgresql://localhost/t"]\n',
        "tests/conftest.py": b'import os\nos.environ.setdefault("PGHOST", "localhost")\n',
        "tests/test_urls.py": b'URL = "postgres://localhost/app"\n',
    }
    needs = config_needs(files)
    assert {(n.service, n.host) for n in needs} == {
        ("redis", "localhost"),
        ("redis", "127.0.0.1"),
        ("postgresql", "localhost"),
    }
    assert all(n.provided for n in needs)


def test_check_needs_drops_only_on_the_checks_own_evidence():
    needs = check_needs(
        [("pytest -q", "in the failing run")],
        [("Could not connect to Redis at 127.0.0.1:6379: Connection refused", "in the output")],
        config={".env": b"DATABASE_URL=mysql://localhost/app\n"},
    )
    assert needs.services == ("redis",) and needs.unavailable == ()


# -- on mined candidates ------------------------------------------------------------------------


def test_a_redis_the_session_started_earlier_is_a_service_of_its_checks():
    session = Session().run("redis-server --daemonize yes", output="")
    candidate = check_story("pytest -q", session=session).mine().only
    assert candidate.services == ("redis",)
    assert candidate.task_command == "pytest -q"


def test_a_connection_error_in_the_failing_output_asks_for_the_service():
    output = (
        "E   redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. "
        "Connection refused.\n1 failed, 3 passed"
    )
    candidate = check_story("pytest -q", fail_output=output).mine().only
    assert candidate.services == ("redis",)


def test_a_database_url_on_the_check_line_asks_for_postgresql():
    run = "DATABASE_URL=postgres://localhost/calc_test pytest -q"
    candidate = check_story(run).mine().only
    assert candidate.services == ("postgresql",)
    assert candidate.task_command == run


def test_a_dotenv_beside_the_check_asks_for_its_local_service():
    env = {".env": "REDIS_URL=redis://localhost:6379/0\n"}
    assert check_story("pytest -q", files=env).mine().only.services == ("redis",)


def test_a_test_that_merely_mentions_redis_needs_no_service():
    files = {
        "tests/test_urls.py": (
            "def test_redis_url():\n    assert parse('redis://localhost:6379/0').port == 6379\n"
        )
    }
    output = "FAILED tests/test_urls.py::test_redis_url - AssertionError: redis port\n1 failed"
    assert check_story("pytest -q", files=files, fail_output=output).mine().only.services == ()


def test_a_redis_cli_between_the_runs_leaves_the_tree_known():
    candidate = check_story("pytest -q", between="redis-cli FLUSHDB").mine().only
    assert candidate.modified == ("calc.py",) and candidate.services == ("redis",)


@pytest.mark.parametrize(
    "failing_output, passing_run, detail",
    [
        ("ERROR 2003 (HY000): Can't connect to MySQL server on 'localhost' (111)", "pytest -q",
         "needs mysql,"),
        ("pymongo.errors.ServerSelectionTimeoutError: localhost:27017", "pytest -q",
         "needs mongodb,"),
        ("1 failed", "DATABASE_URL=mysql://localhost/app pytest -q", "DATABASE_URL=mysql://"),
        ("1 failed", "REDIS_URL=redis://cache.internal:6379 pytest -q",
         "needs redis on cache.internal"),
        ("1 failed", "psql -h db.example.com -c 'truncate t' && pytest -q",
         "needs postgresql on db.example.com"),
        ("redis.exceptions.ConnectionError: Error -2 connecting to redis:6379. Name or service "
         "not known.", "pytest -q", "needs redis on redis"),
    ],
)  # fmt: skip
def test_drop_service_unavailable_for_a_service_the_image_cannot_run(
    failing_output, passing_run, detail
):
    drop = check_story("pytest -q", passing_run, fail_output=failing_output).mine().dropped
    assert_drop(drop, DropReason.SERVICE_UNAVAILABLE, detail)
    assert "which the task's image cannot run" in drop.detail


def test_a_mysql_the_session_used_elsewhere_does_not_drop_the_check():
    session = Session().run("mysql -e 'show databases'", output="information_schema")
    candidate = check_story("pytest -q", session=session).mine().only
    assert candidate.services == ()
