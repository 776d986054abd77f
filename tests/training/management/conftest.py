"""Commands run as from the command line: argv parsed by the command's own parser, the exit
code, stdout and stderr as a shell sees them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.management import get_commands, load_command_class
from django.db import connections


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def manage(capsys, monkeypatch):
    """``manage("pairs_build", "failing-test-repair", "--json")`` -> Ran(code, out, err)."""
    # run_from_argv closes the database connections when it ends, which would end the test's
    # transaction; the command itself is what is under test.
    monkeypatch.setattr(connections, "close_all", lambda: None)

    def run(name: str, *args: str) -> Ran:
        command = load_command_class(get_commands()[name], name)
        capsys.readouterr()
        try:
            command.run_from_argv(["manage.py", name, *args])
            code = 0
        except SystemExit as exit:
            code = int(exit.code or 0)
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run
