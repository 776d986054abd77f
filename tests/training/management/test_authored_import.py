"""manage.py authored_import on bad input: exit 2 with one JSON object naming what is wrong, and
nothing recorded. The kept path, in Docker, is tests/training/test_authored_docker.py."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.training.core.authored.helpers import EXAMPLE, copy_example
from training.models import AuthoredTask

pytestmark = pytest.mark.django_db


def authored_import(*args: str) -> tuple[int, dict[str, Any]]:
    out = StringIO()
    try:
        call_command("authored_import", *args, "--json", stdout=out)
        code = 0
    except CommandError as error:
        code = error.returncode
    return code, json.loads(out.getvalue())


def test_a_folder_that_is_no_authored_task_exits_2_listing_its_problems(tmp_path, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "AUTHORED_DIR": str(tmp_path / "store")}
    folder = copy_example(tmp_path)
    (folder / "solution" / "solve.sh").unlink()
    code, payload = authored_import(str(folder))
    assert code == 2
    assert payload["error"].startswith(str(folder))
    assert "solution/solve.sh is missing" in payload["problems"]
    assert not AuthoredTask.objects.exists()


def test_an_unknown_behaviour_exits_2_naming_the_known_ones():
    code, payload = authored_import(str(EXAMPLE), "--behaviour", "no-such-behaviour")
    assert code == 2
    assert payload == {"error": "no behaviour 'no-such-behaviour' (known: none)"}
    assert not AuthoredTask.objects.exists()
