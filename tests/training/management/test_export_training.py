"""`manage.py export_training` prints the manifest's path; exit 0 written, 1 nothing to export
or refused (the reason on stderr), 2 bad input. Run as from the command line, exit codes and
all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.models import TrainingExport

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(manage):
    def do(*args: str) -> tuple[int, str, str]:
        ran = manage("export_training", *args)
        return ran.code, ran.out, ran.err

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


def test_json_names_the_export_and_as_needs_the_export_role(manage, behaviour, tmp_path):
    ran = manage(
        "export_training", "--kind", "sft", "--behaviour", behaviour.slug, "--out",
        str(tmp_path / "a"), "--as", "bob", "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    export = TrainingExport.objects.get()
    assert export.created_by.username == "bob"
    assert ran.json == {
        "export": export.pk,
        "kind": "sft",
        "behaviour": behaviour.slug,
        "out_dir": str(tmp_path / "a"),
        "manifest": str(tmp_path / "a" / "manifest.json"),
        "sha256": export.sha256,
    }
    ran = manage(
        "export_training", "--kind", "sft", "--behaviour", behaviour.slug, "--out",
        str(tmp_path / "b"), "--as", "alice", "--json",
    )  # fmt: skip
    assert ran.code == 1 and "export" in ran.json["error"]
