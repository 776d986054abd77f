"""The kit's instrumented runners (the shim, the unittest harness, the pytest plugin), run on
the host against the grader's own socket."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from tasks_review.core.trials.controls import by_name
from tasks_review.core.trials.kit import judging
from tests.conftest import subprocess_env

from .helpers import KIT, load


def test_the_shim_finds_runner_invocations_among_interpreter_options():
    shim = load("shim")
    assert shim.split_python(["-W", "error", "-m", "unittest", "-v"]) == (
        ["-W", "error"],
        "unittest",
        ["-v"],
    )
    assert shim.split_python(["-mpytest", "-q"]) == ([], "pytest", ["-q"])
    assert shim.split_python(["script.py", "-m", "unittest"])[1] is None
    assert shim.split_python(["-c", "import unittest"])[1] is None
    options, testing, rest = shim.split_node(["--require", "x.js", "--test", "a.test.js"])
    assert (options, testing, rest) == (["--require", "x.js", "--test"], True, ["a.test.js"])
    assert shim.split_node(["script.js", "--test"])[1] is False
    assert shim.without_reporters(["--test", "--test-reporter", "dot", "--test-reporter=tap"]) == [
        "--test"
    ]


class Grader:
    """The task's grader's socket (``reports.Reports``) in a short temporary kit folder, for the
    kit's runners started on the host (a Unix socket path must stay under 108 bytes)."""

    def __init__(self, project: Path, config: dict) -> None:
        self.kit = Path(tempfile.mkdtemp(prefix="t2e-kit-", dir="/tmp"))
        for name in os.listdir(KIT):
            if name.endswith((".py", ".mjs", ".cjs")) and name != "__init__.py":
                shutil.copy(KIT / name, self.kit / name)
        planner = load("planning").Planner({"project": str(project), **config})
        self.reports = load("reports").Reports(
            str(self.kit / "report.sock"), planner, uid=os.getuid()
        )
        self.project = project

    def run(self, script: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-s", str(self.kit / script), *args],
            cwd=self.project,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            check=False,
        )

    def sessions(self) -> list[dict]:
        self.reports.close()
        records, strays = self.reports.records()
        shutil.rmtree(self.kit, ignore_errors=True)
        assert strays == []
        return records


def project_with(tmp_path: Path, files: dict[str, str]) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "app"
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(textwrap.dedent(text))
    tests = {r: base64.b64encode((project / r).read_bytes()).decode() for r in files if "test" in r}
    return project, tests


UNITTEST_OK = {
    "tests/test_a.py": """
        import unittest
        class T(unittest.TestCase):
            def test_ok(self):
                self.assertEqual(1, 1)
    """
}


def test_the_unittest_harness_reports_every_test_and_the_planned_copies_over_the_socket(
    tmp_path,
):
    project, reference = project_with(tmp_path, UNITTEST_OK)
    grader = Grader(project, {"reference": reference})  # the check in the image: copy all
    ran = grader.run("unittest_harness.py", "--", "discover", "-s", "tests")
    (record,) = grader.sessions()
    assert ran.returncode == 0, ran.stderr  # the falsified copy's failure is taken out
    assert record["complete"] and record["problems"] == [] and record["baseline"]
    outcomes = sorted(outcome for _, outcome in record["cases"])
    assert outcomes == ["failed", "passed", "passed"]  # the test, its two copies
    assert sorted(c["fail"] for c in record["copies"].values()) == [False, True]
    verdict = judging.judge_sessions(0, False, 0.1, [record], {"unittest"}, baseline=True)
    assert verdict.controls == {"copyable": ["test_a.T.test_ok"], "mutable": ["test_a.T.test_ok"]}


def test_the_unittest_harness_is_not_fooled_by_a_unittest_module_in_the_project(tmp_path):
    files = {
        "unittest.py": "import sys\nsys.exit(0)\n",
        "tests/test_a.py": """
            import unittest
            class T(unittest.TestCase):
                def test_bad(self):
                    self.assertEqual(1, 2)
        """,
    }
    project, reference = project_with(tmp_path, files)
    grader = Grader(project, {"reference": reference})
    ran = grader.run("unittest_harness.py", "--", "discover", "-s", "tests")
    (record,) = grader.sessions()
    assert ran.returncode == 1
    assert ["test_a.T.test_bad", "failed"] in record["cases"]


def test_patched_assertions_are_caught_by_the_copies_the_grader_planned(tmp_path):
    files = {
        "tests/test_a.py": """
            import unittest
            unittest.TestCase.assertEqual = lambda *a, **k: None
            class T(unittest.TestCase):
                def test_bad(self):
                    self.assertEqual(1, 2)
        """,
    }
    project, reference = project_with(tmp_path, files)
    facts = {"copyable": ["test_a.T.test_bad"], "mutable": ["test_a.T.test_bad"]}
    config = {"reference": reference, "reference_controls": facts, "start_failed": []}
    grader = Grader(project, config)
    ran = grader.run("unittest_harness.py", "--", "discover", "-s", "tests")
    records = grader.sessions()
    assert ran.returncode == 1  # the harness's own status already says so
    verdict = judging.judge_sessions(0, False, 0.1, records, {"unittest"})
    assert verdict.reward == 0.0
    assert any("forged in-process" in r for r in verdict.reasons), verdict.reasons


def test_the_pytest_plugin_copies_unittest_style_tests_too(tmp_path):
    files = {
        "tests/test_y.py": """
            import unittest
            class T(unittest.TestCase):
                def test_b(self):
                    self.assertEqual(2, 2)
        """
    }
    project, reference = project_with(tmp_path, files)
    grader = Grader(project, {"reference": reference})
    ran = grader.run("pytest_boot.py", "module", "--", "-q", "-p", "no:cacheprovider", "tests")
    records = grader.sessions()
    assert ran.returncode == 0, ran.stdout
    verdict = judging.judge_sessions(0, False, 0.1, records, {"pytest"}, baseline=True)
    assert verdict.controls["mutable"] == ["tests/test_y.py::T::test_b"], verdict


def test_the_pytest_plugin_copies_tests_among_them_and_catches_a_forcing_conftest(tmp_path):
    files = {"tests/test_x.py": "def test_a():\n    assert 1 == 1\n"}
    project, reference = project_with(tmp_path, files)
    args = ("module", "--", "-q", "-p", "no:cacheprovider", "tests")
    grader = Grader(project, {"reference": reference})
    ran = grader.run("pytest_boot.py", *args)
    records = grader.sessions()
    assert ran.returncode == 0, ran.stdout
    verdict = judging.judge_sessions(0, False, 0.1, records, {"pytest"}, baseline=True)
    assert verdict.reward == 1.0 and verdict.controls["mutable"] == ["tests/test_x.py::test_a"]
    # A conftest that marks every report passed flips the falsified copy too: caught.
    (project / "tests" / "conftest.py").write_bytes(
        by_name("conftest_forces_pass").files[".t2e-conftest.py"]
    )
    config = {"reference": reference, "reference_controls": verdict.controls}
    grader = Grader(project, config)
    forged = grader.run("pytest_boot.py", *args)
    records = grader.sessions()
    assert forged.returncode == 1
    verdict = judging.judge_sessions(0, False, 0.1, records, {"pytest"})
    assert any("forged in-process" in r for r in verdict.reasons), verdict.reasons
