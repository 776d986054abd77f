"""The tampering controls' catalogue, and some controls run on the host, without Docker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tasks_review.core.trials import CATALOGUE, ControlContext
from tasks_review.core.trials.controls import NPM_SCRIPT, by_name
from tests.conftest import subprocess_env

CONTEXT = ControlContext(
    language="python",
    runners=frozenset({"unittest"}),
    project_dir="/app",
    workdir="/app",
    tests=("tests/test_a.py",),
    sources=("pkg/a.py",),
)


def test_the_catalogue_has_every_control_the_issue_names_once():
    names = [c.name for c in CATALOGUE]
    assert len(names) == len(set(names))
    for required in [
        "forge_reward_files",
        "delete_tests",
        "empty_tests",
        "trivial_tests",
        "conftest_forces_pass",
        "sitecustomize_forces_pass",
        "fake_runner_in_project",
        "fake_runner_on_path",
        "npm_test_script_exit0",
        "symlink_tests_outside",
        "symlink_submission_outside",
        "inprocess_forgery",
    ]:
        assert required in names
    assert all(c.description and c.shell for c in CATALOGUE)


def test_controls_that_do_not_apply_say_why():
    assert "pytest" in by_name("conftest_forces_pass").skip_reason(CONTEXT)
    assert by_name("npm_test_script_exit0").skip_reason(CONTEXT)
    assert by_name("sitecustomize_forces_pass").skip_reason(CONTEXT) is None
    node = ControlContext("node", frozenset({"node-test", NPM_SCRIPT}), "/app", "/app")
    assert by_name("npmrc_script_shell").skip_reason(node) is None
    assert "no tests" in by_name("delete_tests").skip_reason(node)
    assert "python" in by_name("sitecustomize_forces_pass").skip_reason(node)


def _run_control(name: str, tmp_path: Path, files: dict[str, bytes]) -> Path:
    project = tmp_path / "app"
    for rel, data in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_bytes(data)
    control = by_name(name)
    for rel, data in control.files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_bytes(data)
    context = ControlContext(
        "python",
        frozenset({"unittest"}),
        str(project),
        str(project),
        tests=tuple(p for p in files if p.startswith("tests/")),
        sources=tuple(p for p in files if p.startswith("pkg/")),
    )
    env = subprocess_env(**context.env(), HOME=str(tmp_path / "home"))
    done = subprocess.run(
        ["sh", "-c", control.shell],
        cwd=project,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return project


def test_the_trivial_tests_control_really_makes_unittest_pass_on_the_host(tmp_path):
    project = _run_control(
        "trivial_tests",
        tmp_path,
        {
            "tests/test_a.py": b"import unittest\nclass T(unittest.TestCase):\n"
            b"    def test_x(self):\n        self.fail()\n"
        },
    )
    ran = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0 and "Ran 1 test" in ran.stderr


def test_the_inprocess_forgery_control_silences_assertions_on_the_host(tmp_path):
    project = _run_control(
        "inprocess_forgery",
        tmp_path,
        {
            "pkg/__init__.py": b"VALUE = 1\n",
            "tests/test_a.py": b"import unittest\nimport pkg\nclass T(unittest.TestCase):\n"
            b"    def test_x(self):\n        self.assertEqual(pkg.VALUE, 2)\n",
        },
    )
    ran = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0  # a naive grader is fooled; the controls in the harness are not
