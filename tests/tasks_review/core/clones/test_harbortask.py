"""A Harbor trial starts from the files its task's environment/Dockerfile lays in the image."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from tasks_review.core.clones import task_folder, task_overlay
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats.trial import harbor_trial

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def task(folder: Path, dockerfile: str, files: dict[str, str | bytes]) -> Path:
    (folder / "environment").mkdir(parents=True)
    (folder / "task.toml").write_text('version = "1.0"\n')
    (folder / "tests").mkdir()
    (folder / "tests" / "test.sh").write_text("#!/bin/sh\npytest /tests\n")  # the verifier's
    (folder / "environment" / "Dockerfile").write_text(dockerfile)
    for name, content in files.items():
        path = folder / "environment" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return folder


def seeded(folder: Path, root: str = "/app") -> dict[str, str]:
    blobs = MemoryBlobs()
    overlay = task_overlay(folder, root, blobs)
    assert overlay.reason == "", overlay.reason
    return {k: blobs.get(v).decode() for k, v in overlay.seed.items()}


def test_copy_of_the_context_into_the_workdir_is_the_sessions_start(tmp_path):
    folder = task(
        tmp_path / "t",
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nRUN pip install pytest\n",
        {"calc.py": CALC, "tests/test_calc.py": TEST},
    )
    dockerfile = (folder / "environment" / "Dockerfile").read_text()  # in the context too
    # The task's own tests/ (the verifier's) lie outside the build context: never seeded.
    assert seeded(folder) == {"calc.py": CALC, "tests/test_calc.py": TEST, "Dockerfile": dockerfile}


@pytest.mark.parametrize(
    "dockerfile",
    [
        'FROM python:3.12\nCOPY ["calc.py", "/app/"]\nCOPY tests/ /app/tests/\n',
        "FROM golang AS build\nCOPY . /src\nFROM python:3.12\nWORKDIR /app\n"
        "COPY --chown=1000:1000 calc.py ./\nCOPY --from=build /src/bin /usr/bin/x\n"
        "COPY tests /app/tests\n",
        "FROM python:3.12\nWORKDIR /app\nCOPY \\\n  calc.py \\\n  /app/calc.py\n"
        "ADD src.tar /app/\n",
    ],
)
def test_json_form_multi_stage_continuations_and_a_local_tar_map_to_container_paths(
    tmp_path, dockerfile
):
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        data = TEST.encode()
        info = tarfile.TarInfo("tests/test_calc.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        evil = tarfile.TarInfo("../../etc/passwd")
        evil.size = 1
        tar.addfile(evil, io.BytesIO(b"x"))
    files = {"calc.py": CALC, "tests/test_calc.py": TEST, "src.tar": archive.getvalue()}
    assert seeded(task(tmp_path / "t", dockerfile, files)) == {
        "calc.py": CALC,
        "tests/test_calc.py": TEST,
    }


def test_dockerignore_leaves_out_what_the_build_never_saw(tmp_path):
    folder = task(
        tmp_path / "t",
        "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n",
        {
            ".dockerignore": "*.log\nbuild/\nDockerfile\n.dockerignore\n!keep.log\n",
            "calc.py": CALC,
            "debug.log": "x\n",
            "keep.log": "kept\n",
            "build/out.py": "x = 1\n",
        },
    )
    assert seeded(folder) == {"calc.py": CALC, "keep.log": "kept\n"}


def test_an_environment_that_builds_on_an_image_of_the_repository_says_why_it_has_no_seed(
    tmp_path,
):
    folder = task(tmp_path / "t", "FROM swebench/sweb.eval.x86_64.astropy:latest\n", {})
    overlay = task_overlay(folder, "/testbed", MemoryBlobs())
    assert not overlay.applied
    assert overlay.reason.startswith(
        "the environment builds FROM swebench/sweb.eval.x86_64.astropy:latest; the session's "
        "files under /testbed are in that image"
    )


@pytest.mark.parametrize(
    ("dockerfile", "why"),
    [
        (b"FROM python:3.12\n\xff\xfe", "is not UTF-8 text"),
        (None, "does not exist"),
    ],
    ids=["not-utf8", "missing"],
)
def test_a_dockerfile_that_cannot_be_read_says_why_in_words(tmp_path, dockerfile, why):
    folder = task(tmp_path / "t", "FROM python:3.12\n", {})
    path = folder / "environment" / "Dockerfile"
    if dockerfile is None:
        path.unlink()
    else:
        path.write_bytes(dockerfile)
    overlay = task_overlay(folder, "/app", MemoryBlobs())
    assert not overlay.applied
    assert overlay.reason == f"{path} cannot be read: it {why}"


def trial_folder(where: Path, task_path: str) -> Path:
    trial = where / "jobs" / "2026-04-13__04-01-12" / "calc__abc"
    (trial / "agent").mkdir(parents=True)
    (trial / "agent" / "trajectory.json").write_text("{}")
    result = {
        "task_name": "calc",
        "trial_name": "calc__abc",
        "config": {"task": {"path": task_path}, "trials_dir": "jobs/2026-04-13__04-01-12"},
    }
    (trial / "result.json").write_text(json.dumps(result))
    return trial


def test_the_task_folder_is_the_configured_one_else_the_one_beside_the_jobs_folder(tmp_path):
    folder = task(tmp_path / "datasets" / "calc", "FROM python:3.12\n", {})
    trial = harbor_trial(trial_folder(tmp_path, "datasets/calc") / "agent" / "trajectory.json")
    assert trial is not None and trial.task_path == "datasets/calc"
    assert task_folder({}, trial) == folder
    elsewhere = tmp_path / "mine"
    for key in ("calc", "datasets/calc"):
        assert task_folder({key: elsewhere}, trial) == elsewhere
    gone = harbor_trial(trial_folder(tmp_path / "other", "datasets/gone") / "result.json")
    assert gone is not None and task_folder({}, gone) is None
