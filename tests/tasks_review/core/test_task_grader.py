"""The task's own grader (tests/grader/grade.py): the same guards and rules as the matrix."""

from __future__ import annotations

import base64
import importlib.util
import os
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tasks_review.core.trials.plan import guard_rules, is_guarded

KIT = Path(__file__).parents[3] / "tasks_review" / "core" / "trials" / "kit"


def load_grade():
    sys.path.insert(0, str(KIT))
    try:
        spec = importlib.util.spec_from_file_location("traj2env_grade", KIT / "grade.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(KIT))


grade = load_grade()
RULES = grade.Rules(guard_rules())

SEGMENT = st.sampled_from(
    [
        "src",
        "tests",
        "test",
        "spec",
        "__tests__",
        "lib",
        "a",
        "conftest.py",
        "pytest.ini",
        "package.json",
        ".npmrc",
        "x.pth",
        "test_a.py",
        "a_test.py",
        "a.test.js",
        "b.spec.ts",
        "vitest.config.mts",
        ".mocharc.yml",
        "tox.ini",
        "app.py",
        "index.js",
        "sitecustomize.py",
        "setup.cfg",
        "README.md",
    ]
)


@given(st.lists(SEGMENT, min_size=1, max_size=4))
def test_the_graders_guard_is_the_matrix_guard(parts):
    path = "/".join(parts)
    assert RULES.guarded(path) == is_guarded(path), path


def test_the_grader_is_standard_library_only():
    for name in ("grade.py", "judging.py", "shim.py", "unittest_harness.py"):
        text = (KIT / name).read_text()
        assert "tasks_review" not in text and "django" not in text.lower(), name


def write(root: Path, rel: str, data: bytes = b"x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_cleaning_removes_links_caches_dependencies_and_guarded_files_the_reference_lacks(
    tmp_path,
):
    project = tmp_path / "app"
    write(project, "calc/ops.py", b"mine")
    write(project, "tests/test_ops.py", b"gutted")
    write(project, "conftest.py", b"forcing passes")
    write(project, "sub/sitecustomize.py", b"forcing passes")
    write(project, "calc/__pycache__/ops.cpython-311.pyc", b"stale")
    write(project, "node_modules/.bin/node", b"#!/bin/sh\nexit 0\n")
    write(project, ".git/HEAD", b"ref: refs/heads/main\n")
    os.symlink("/etc/passwd", project / "t2e-etc")
    os.mkfifo(project / "pipe")
    reference = {"tests/test_ops.py": base64.b64encode(b"real tests").decode()}

    removed = grade.clean(str(project), RULES, reference)

    assert sorted(removed) == sorted(
        [
            "calc/__pycache__/",
            "conftest.py",
            "node_modules/",
            "pipe",
            "sub/sitecustomize.py",
            "t2e-etc",
        ]
    )
    assert (project / "calc/ops.py").read_bytes() == b"mine"
    assert (project / ".git/HEAD").exists()  # the image's repository is left alone
    assert (project / "tests/test_ops.py").exists()  # restored next, not removed


def test_restoring_writes_the_references_exact_bytes_making_way_for_them(tmp_path):
    project = tmp_path / "app"
    write(project, "tests/test_ops.py", b"gutted")
    write(project, "package.json", b'{"scripts": {"test": "exit 0"}}')
    write(project, "spec", b"a file where the reference has a folder")
    (project / "tests/data.json").mkdir(parents=True)  # a folder where it has a file
    odd = "tests/odd name\n\udcff.py"
    reference = {
        "tests/test_ops.py": b"real tests",
        "package.json": b'{"scripts": {"test": "node --test"}}',
        "spec/a.spec.js": b"spec",
        "tests/data.json": b"{}",
        "tests/unchanged.py": b"same",
    }
    write(project, "tests/unchanged.py", b"same")
    encoded = {k: base64.b64encode(v).decode() for k, v in reference.items()}
    encoded[odd] = base64.b64encode(b"\x00\xff").decode()

    restored = grade.restore(str(project), encoded)

    for rel, data in reference.items():
        assert (project / rel).read_bytes() == data, rel
        assert (project / rel).stat().st_mode & 0o777 == 0o644
    assert (project / odd).read_bytes() == b"\x00\xff"
    assert "tests/unchanged.py" not in restored
    assert {"tests/test_ops.py", "package.json", "spec/a.spec.js", "tests/data.json"} <= set(
        restored
    )


def test_the_path_the_check_runs_with_has_the_kit_first_and_nothing_from_the_project(
    monkeypatch,
):
    monkeypatch.setenv("PATH", "/app/node_modules/.bin:.:/usr/local/bin:/app:/usr/bin:/bin")
    assert grade.safe_path("/app", "/tmp/kit/bin") == "/tmp/kit/bin:/usr/local/bin:/usr/bin:/bin"


def test_only_the_manifest_and_the_results_it_names_are_kept():
    manifest = b'{"kind": "pytest", "result": "a.xml"}\nnot json\n{"kind": "x"}\n'
    files = {
        "invocations.jsonl": manifest,
        "a.xml": b"<x/>",
        **{f"junk{i}": b"" for i in range(300)},
    }
    assert set(grade.reported(files)) == {"invocations.jsonl", "a.xml"}
