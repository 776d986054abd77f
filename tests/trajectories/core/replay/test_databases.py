"""Database and cache clients change what a server holds, not the project's files."""

from __future__ import annotations

import pytest

from .helpers import LOST, after

KNOWN = {"a.py": "a\n"}


@pytest.mark.parametrize(
    "command",
    [
        "redis-cli FLUSHDB",
        "redis-cli -h localhost -p 6379 PING",
        "psql -c 'CREATE DATABASE test'",
        "psql -f schema.sql app_test",
        "createdb test && dropdb --if-exists old",
        "pg_isready -h localhost",
        "createuser -s grader",
    ],
)
def test_service_clients_change_no_file(command):
    assert after(command, files=KNOWN) == KNOWN


@pytest.mark.parametrize(
    "command, lost",
    [
        ("psql -o out.txt -c 'select 1'", "out.txt"),
        ("psql --output=rows.txt -c 'select 1'", "rows.txt"),
        ("psql -L session.log", "session.log"),
        ("redis-cli --rdb dump.rdb", "dump.rdb"),
        ("pg_dump -f backup.sql app", "backup.sql"),
    ],
)
def test_service_clients_lose_the_files_their_options_write(command, lost):
    assert after(command, files=KNOWN) == {**KNOWN, lost: LOST}
