"""The task's own grader (tests/grader/grade.py): the same guards and rules as the matrix."""

from __future__ import annotations

import base64
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tasks_review.core.trials.kit import judging
from tasks_review.core.trials.plan import guard_rules, is_discovered, is_guarded

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
    for name in (
        "grade.py",
        "judging.py",
        "copies.py",
        "traj2env_channel.py",
        "shim.py",
        "unittest_harness.py",
        "pytest_boot.py",
        "traj2env_pytest_controls.py",
    ):
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


def test_cleaning_removes_files_a_runner_would_discover_that_the_reference_lacks(tmp_path):
    project = tmp_path / "app"
    for rel in [
        "test0.py",  # unittest's test*.py, discovered before test_wordstats.py
        "tests.py",
        "a-test.js",  # node --test's *-test.js, test-*.js, *_test.js
        "test-a.js",
        "lib/a_test.js",
        "test.mjs",
        "test_wordstats.py",
        "wordstats.py",
        "latest.js",
    ]:
        write(project, rel)
    reference = {"test_wordstats.py": base64.b64encode(b"real").decode()}

    removed = grade.clean(str(project), RULES, reference)

    assert sorted(removed) == [
        "a-test.js",
        "lib/a_test.js",
        "test-a.js",
        "test.mjs",
        "test0.py",
        "tests.py",
    ]
    assert (project / "wordstats.py").exists() and (project / "latest.js").exists()


def test_a_discover_pattern_in_the_check_is_a_discovery_rule_too(tmp_path):
    rules = grade.Rules(guard_rules("python3 -m unittest discover -s tests -p '*_spec.py'"))
    assert rules.discovered("tests/cart_spec.py") and not RULES.discovered("tests/cart_spec.py")
    assert is_discovered("cart_spec.py", "python -m unittest discover -p '*_spec.py'")


def test_a_project_module_shadowing_the_standard_library_is_a_finding_unless_the_reference_has_it(
    tmp_path,
):
    project = tmp_path / "app"
    write(project, "decimal.py")
    write(project, "json/__init__.py")
    write(project, "pytest.py")
    write(project, "tests/re.py")
    write(project, "pkg/types.py")  # inside a package: not on the import path
    write(project, "calendar.py")
    reference = {"calendar.py": "eA=="}

    found = grade.shadowing(str(project), {".", "tests"}, reference)

    assert [f.split(" ")[0] for f in found] == [
        "decimal.py",
        "json/__init__.py",
        "pytest.py",
        "tests/re.py",
    ]
    # The project's own modules with such names are no finding (grading.json lists its paths).
    own = {"calendar.py", "decimal.py", "json/__init__.py", "pytest.py", "tests/re.py"}
    assert grade.shadowing(str(project), {".", "tests"}, own) == []


def test_protected_reference_files_can_be_added_beside_but_not_replaced(tmp_path):
    project = tmp_path / "app"
    write(project, "tests/test_a.py", b"real")
    reference = {"tests/test_a.py": base64.b64encode(b"real").decode()}
    assert grade.changed_during_check(str(project), reference) == []
    (project / "tests/test_a.py").write_bytes(b"stubbed")
    assert grade.changed_during_check(str(project), reference) == [
        "tests/test_a.py was changed during the check"
    ]


def served(tmp_path, config):
    kit = Path(tempfile.mkdtemp(prefix="t2e-", dir="/tmp"))
    reports = grade.Reports(str(kit / "report.sock"), grade.Planner({"project": "/app", **config}))
    return kit, reports


def test_the_report_channel_flags_a_test_reported_twice_and_anything_after_the_end(tmp_path):
    kit, reports = served(tmp_path, {"reference": {}, "reference_controls": {}})
    sys.path.insert(0, str(KIT))
    try:
        import traj2env_channel

        traj2env_channel.PATH = str(kit / "report.sock")
        link = traj2env_channel.Channel("unittest", argv=["python -m unittest"])
        assert link.receive() == {"t": "ok"}
        link.send({"t": "case", "id": "t.T.test_a", "outcome": "failed"})
        link.send({"t": "case", "id": "t.T.test_a", "outcome": "passed"})  # an exit hook's
        link.send({"t": "end"})
        link.send({"t": "case", "id": "t.T.test_b", "outcome": "passed"})
        link.close()
        stray = traj2env_channel.Channel("nonsense")
        stray.close()
    finally:
        sys.path.remove(str(KIT))
    reports.close()
    (record,), strays = reports.records()
    assert record["complete"] and record["pid"] == os.getpid()
    assert record["problems"] == [
        "t.T.test_a was reported twice",
        "it reported after its end (an exit hook?)",
    ]
    assert strays and "without saying what it is" in strays[0]
    verdict = judging.judge_sessions(0, False, 0.1, [record], {"unittest"})
    assert verdict.reward == 0.0
    shutil.rmtree(kit)


def test_the_grader_plans_copies_of_failing_tests_and_falsified_ones_per_session():
    reference = {"tests/test_a.py": base64.b64encode(TESTS).decode()}
    ids = [f"test_a.T.test_{n}" for n in ("one", "two", "three", "four")]
    facts = {"copyable": ids, "mutable": ids[:2]}
    planner = grade.Planner(
        {
            "project": "/app",
            "reference": reference,
            "reference_controls": facts,
            "start_failed": ["test_a.T.test_three", "test_a.T.test_four"],
        }
    )
    tests = [
        {"id": i, "file": "/app/tests/test_a.py", "qualname": "T." + i.rsplit(".", 1)[1]}
        for i in ids
    ]
    plan, problems = planner.python(tests)
    assert problems == []
    verbatim = {e["of"] for e in plan if not e["fail"]}
    falsified = {e["of"] for e in plan if e["fail"]}
    assert {"test_a.T.test_three", "test_a.T.test_four"} <= verbatim and len(verbatim) == 3
    assert falsified == {"test_a.T.test_one", "test_a.T.test_two"}
    names = [e["name"] for e in plan]
    assert len(set(names)) == len(names) and all(re.fullmatch(r"test_[a-z]{14}", n) for n in names)
    again, _ = planner.python(tests)
    assert {e["name"] for e in again}.isdisjoint(names)  # per grading, never the same
    # A test the reference could falsify that now comes from elsewhere is a problem.
    moved = [{**tests[0], "file": "/app/elsewhere.py"}, *tests[1:]]
    assert planner.python(moved)[1] == [
        "test_a.T.test_one is not the reference's test (substituted?)"
    ]


TESTS = b"""import unittest


class T(unittest.TestCase):
    def test_one(self):
        self.assertEqual(1, 1)

    def test_two(self):
        assert 2 == 2

    def test_three(self):
        self.assertTrue(True)

    def test_four(self):
        self.assertIn(1, [1])
"""
