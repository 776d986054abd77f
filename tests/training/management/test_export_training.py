"""`manage.py export_training` prints the manifest's path; exit 0 written, 1 nothing to export
or refused (the reason on stderr), 2 bad input. Run as from the command line, exit codes and
all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import connections

from tests.training.loop_factories import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.management.commands.export_training import Command

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(capsys, monkeypatch):
    # run_from_argv closes the database connections when it ends, which would end the test's
    # transaction; the command itself is what is under test.
    monkeypatch.setattr(connections, "close_all", lambda: None)

    def do(*args: str) -> tuple[int, str, str]:
        try:
            Command().run_from_argv(["manage.py", "export_training", *args])
            code = 0
        except SystemExit as exit:
            code = int(exit.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return do


@pytest.fixture
def behaviour(people):
    behaviour = behaviour_with(train=1)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    evaluated(behaviour)
    return behaviour


def test_a_written_export_prints_its_manifest_path_and_exits_0(run, behaviour, tmp_path):
    code, out, err = run("--kind", "sft", "--behaviour", behaviour.slug, "--out", str(tmp_path))
    assert code == 0, err
    manifest = Path(out.strip())
    assert manifest == tmp_path / "manifest.json"
    assert json.loads(manifest.read_text())["kind"] == "sft"


def test_a_refused_export_exits_1_with_the_reason_on_stderr(run, people, tmp_path):
    held_out = behaviour_with(train=0, held_out=1, slug="read-before-edit")
    [task] = held_out.tasks.all()
    pass_and_fail(task)
    evaluated(held_out)
    code, out, err = run(
        "--kind", "kto", "--behaviour", held_out.slug, "--out", str(tmp_path / "h"),
        "--task", str(task.pk),
    )  # fmt: skip
    assert code == 1 and out == ""
    assert "refused: held-out tasks may not enter a training export" in err


def test_nothing_to_export_exits_1(run, people, tmp_path):
    empty = behaviour_with(train=1)
    code, _out, err = run("--kind", "sft", "--behaviour", empty.slug, "--out", str(tmp_path))
    assert code == 1 and "has no graded rollouts" in err


def test_bad_input_exits_2_naming_what_is_wrong(run, behaviour, tmp_path):
    code, _out, err = run("--kind", "sft", "--behaviour", "no-such", "--out", str(tmp_path))
    assert code == 2 and "no-such" in err and behaviour.slug in err
    code, _out, err = run("--kind", "rlhf", "--behaviour", behaviour.slug, "--out", str(tmp_path))
    assert code == 2 and "invalid choice: 'rlhf'" in err
    (tmp_path / "taken.txt").write_text("x")
    code, _out, err = run("--kind", "sft", "--behaviour", behaviour.slug, "--out", str(tmp_path))
    assert code == 2 and "not an empty folder" in err
