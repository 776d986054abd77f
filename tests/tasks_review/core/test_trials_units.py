"""The trial layer without Docker: result parsing, reward rules, the catalogue, plans, deps."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tasks_review.core.docker import ExecResult, FileEntry
from tasks_review.core.trials import (
    CATALOGUE,
    ControlContext,
    Dependency,
    MatrixStatus,
    OfflineSources,
    Role,
    TrialRecord,
    TrialStatus,
    decide,
    declared_dependencies,
    is_guarded,
    judge,
    npm_satisfies,
    parse_junit,
    parse_unittest_json,
    plan_check,
    unavailable,
)
from tasks_review.core.trials.controls import NPM_SCRIPT, by_name
from tasks_review.core.trials.deps import python_requirements
from tasks_review.core.trials.plan import named_paths
from tasks_review.core.trials.results import read_reports
from tests.conftest import subprocess_env

KIT = Path(__file__).resolve().parents[3] / "tasks_review" / "core" / "trials" / "kit"
NONCE = "0123abcd4567"
OK = ExecResult(0, "", "", 0.1)
FAILED_RUN = ExecResult(1, "", "", 0.1)


def unittest_report(*cases: tuple[str, str]) -> dict[str, FileEntry]:
    tests = [{"id": i, "outcome": o} for i, o in cases]
    manifest = json.dumps({"kind": "unittest", "argv": ["python3"], "result": "a.unittest.json"})
    return {
        "invocations.jsonl": FileEntry(manifest.encode() + b"\n"),
        "a.unittest.json": FileEntry(json.dumps({"tests": tests}).encode()),
    }


def controls(pass_outcome: str = "passed", fail_outcome: str = "failed") -> list[tuple[str, str]]:
    return [
        (f"h.Traj2envControls.test_traj2env_control_must_pass_{NONCE}", pass_outcome),
        (f"h.Traj2envControls.test_traj2env_control_must_fail_{NONCE}", fail_outcome),
    ]


PLAN = plan_check("python3 -m unittest discover -s tests", ".", {})


# -- parsing -------------------------------------------------------------------------------------


NODE_JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testcase name="traj2env control must pass 0123abcd4567" classname="test"/>
  <testcase name="traj2env control must fail 0123abcd4567" classname="test" failure="x">
    <failure type="testCodeFailure" message="x">boom</failure>
  </testcase>
  <testsuite name="slugify">
    <testcase name="drops punctuation" classname="test"/>
    <testcase name="trims" classname="test"><skipped/></testcase>
  </testsuite>
  <testcase name="drops punctuation" classname="test"/>
</testsuites>
"""


def test_node_junit_is_read_with_suites_and_repeated_names_kept_apart():
    cases = {c.id: c.outcome for c in parse_junit(NODE_JUNIT)}
    assert cases["test > traj2env control must fail 0123abcd4567"] == "failed"
    assert cases["slugify > test > drops punctuation"] == "passed"
    assert cases["slugify > test > trims"] == "skipped"
    assert cases["test > drops punctuation"] == "passed"


def test_a_name_repeated_in_one_suite_is_counted_twice():
    doubled = b"<testsuites><testcase name='a' classname='c'/><testcase name='a' classname='c'/>"
    ids = [c.id for c in parse_junit(doubled + b"</testsuites>")]
    assert ids == ["c > a", "c > a#2"]


def test_pytest_junit_counts_errors_and_failures():
    xml = b"""<testsuites><testsuite name="pytest">
      <testcase classname="tests.test_x" name="test_a"/>
      <testcase classname="tests.test_x" name="test_b"><failure message="boom"/></testcase>
      <testcase classname="tests.test_x" name="test_c"><error message="setup"/></testcase>
    </testsuite></testsuites>"""
    assert [(c.id, c.outcome) for c in parse_junit(xml)] == [
        ("tests.test_x > test_a", "passed"),
        ("tests.test_x > test_b", "failed"),
        ("tests.test_x > test_c", "error"),
    ]


@pytest.mark.parametrize("junk", [b"", b"not xml", b"<html/>"])
def test_junk_junit_is_a_problem_not_a_pass(junk):
    files = {
        "invocations.jsonl": FileEntry(b'{"kind": "node-test", "result": "x.xml"}\n'),
        "x.xml": FileEntry(junk),
    }
    (report,) = read_reports(files)
    assert report.problem
    verdict = judge(OK, [report], plan_check("node --test", ".", {}), NONCE)
    assert verdict.reward == 0.0


def test_unittest_json_must_be_the_harness_shape():
    assert parse_unittest_json(b'{"tests": [{"id": "a", "outcome": "passed"}]}')[0].id == "a"
    with pytest.raises(ValueError):
        parse_unittest_json(b'{"passed": true}')


# -- the reward rules ----------------------------------------------------------------------------


def test_all_real_tests_passing_with_controls_behaving_scores_one():
    files = unittest_report(("t.T.test_a", "passed"), *controls())
    verdict = judge(OK, read_reports(files), PLAN, NONCE, reference={"t.T.test_a": 1})
    assert (verdict.reward, verdict.reasons) == (1.0, ())
    assert verdict.passed == {"t.T.test_a": 1}


def test_a_must_fail_control_reported_passing_means_forged_results():
    files = unittest_report(("t.T.test_a", "passed"), *controls(fail_outcome="passed"))
    verdict = judge(OK, read_reports(files), PLAN, NONCE)
    assert verdict.reward == 0.0
    assert "forged in-process" in verdict.reasons[0]


def test_missing_results_for_an_expected_runner_score_zero_even_with_exit_zero():
    verdict = judge(OK, [], PLAN, NONCE)
    assert verdict.reward == 0.0
    assert "no unittest results" in verdict.reasons[0]


def test_a_runner_that_left_no_result_file_scores_zero():
    files = unittest_report(("t.T.test_a", "passed"), *controls())
    del files["a.unittest.json"]
    verdict = judge(OK, read_reports(files), PLAN, NONCE)
    assert verdict.reward == 0.0 and "left no results" in verdict.reasons[0]


def test_tests_that_passed_on_the_reference_must_pass_again_not_vanish_or_skip():
    files = unittest_report(("t.T.test_a", "passed"), ("t.T.test_b", "skipped"), *controls())
    reference = {"t.T.test_a": 1, "t.T.test_b": 1}
    verdict = judge(OK, read_reports(files), PLAN, NONCE, reference=reference)
    assert verdict.reward == 0.0
    assert "t.T.test_b" in verdict.reasons[0]


def test_a_failing_check_or_a_timeout_scores_zero():
    files = unittest_report(("t.T.test_a", "passed"), *controls())
    assert judge(FAILED_RUN, read_reports(files), PLAN, NONCE).reward == 0.0
    timed_out = ExecResult(None, "", "", 600.0, timed_out=True)
    assert "time limit" in judge(timed_out, read_reports(files), PLAN, NONCE).reasons[0]


def test_no_real_test_is_not_a_pass():
    verdict = judge(OK, read_reports(unittest_report(*controls())), PLAN, NONCE)
    assert verdict.reasons == ("unittest: no real test ran",)


def test_a_check_without_a_runner_is_graded_by_exit_status_and_says_so():
    plan = plan_check("test -f build/report.txt", ".", {})
    assert plan.mode == "exit_code"
    assert judge(OK, [], plan, NONCE).reward == 1.0
    assert judge(FAILED_RUN, [], plan, NONCE).grading == "exit_code"


# -- the grading plan ----------------------------------------------------------------------------


def test_plan_finds_the_runners_behind_npm_scripts():
    files = {
        "package.json": json.dumps(
            {"scripts": {"test": "npm run unit", "unit": "node --test"}}
        ).encode()
    }
    plan = plan_check("npm test", ".", files)
    assert plan.structured == {"node-test"}
    assert plan.scripts == ("npm test", "npm unit")
    assert {r.name for r in plan.requirements} == {"npm", "node"}


def test_plan_needs_pytest_as_a_module_and_follows_cd():
    plan = plan_check("cd backend && python -m pytest -q", ".", {})
    assert plan.structured == {"pytest"}
    module = [r for r in plan.requirements if r.kind == "module"]
    assert [(r.name, r.cwd, r.python) for r in module] == [("pytest", "backend", "python")]


def test_guarded_paths_cover_tests_configuration_and_start_up_hooks():
    for path in [
        "tests/test_x.py",
        "package.json",
        ".npmrc",
        "sub/conftest.py",
        "x.pth",
        "sitecustomize.py",
        "pyproject.toml",
        "test/a.test.js",
    ]:
        assert is_guarded(path), path
    for path in ["src/app.py", "README.md", "lib/index.js"]:
        assert not is_guarded(path), path


def test_named_paths_are_what_a_check_looks_for_and_the_project_lacks():
    files = {"tests/test_out.py": b"assert Path('build/report.txt').exists()\nx = '0.125'\n"}
    found = named_paths("test -f dist/app.js && python3 -m unittest", files)
    assert sorted(found) == ["build/report.txt", "dist/app.js"]


# -- the catalogue -------------------------------------------------------------------------------


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


# -- decisions -----------------------------------------------------------------------------------


def trial(
    role: Role,
    reward: float | None,
    status: TrialStatus = TrialStatus.GRADED,
    name: str | None = None,
) -> TrialRecord:
    now = datetime.now(UTC)
    return TrialRecord(
        role,
        name or str(role),
        0,
        reward,
        1.0 if role is Role.ORACLE else 0.0,
        status,
        now,
        now,
        0.0,
    )


def test_kept_only_with_full_oracle_zero_noop_and_zero_controls():
    good = [trial(Role.ORACLE, 1.0), trial(Role.NOOP, 0.0), trial(Role.CONTROL, 0.0, name="x")]
    assert decide(good)[0] is MatrixStatus.KEPT
    assert decide([*good, trial(Role.CONTROL, 1.0, name="y")])[0] is MatrixStatus.REJECTED
    assert decide([trial(Role.ORACLE, 0.0), *good[1:]])[0] is MatrixStatus.REJECTED
    assert decide(good[1:])[0] is MatrixStatus.REJECTED  # no oracle at all


def test_an_ungraded_trial_leaves_the_candidate_ungraded_unless_something_rejects_it():
    good = [trial(Role.ORACLE, 1.0), trial(Role.NOOP, 0.0)]
    ungraded = trial(Role.ORACLE, None, TrialStatus.UNGRADED)
    assert decide([*good, ungraded])[0] is MatrixStatus.UNGRADED
    assert decide([*good, ungraded, trial(Role.NOOP, 1.0)])[0] is MatrixStatus.REJECTED
    skipped = trial(Role.CONTROL, None, TrialStatus.SKIPPED, name="conftest_forces_pass")
    assert decide([*good, skipped])[0] is MatrixStatus.KEPT


# -- dependencies --------------------------------------------------------------------------------


def test_declared_dependencies_are_read_from_every_manifest_kind():
    files = {
        "requirements.txt": b"requests>=2.0  # http\n-e .\n./local\n"
        b"pytest==8.3.5; python_version>'3'\nold==1.0; python_version<'3'\n",
        "pyproject.toml": b'[project]\ndependencies = ["attrs>=23"]\n'
        b'[tool.poetry.dependencies]\npython = "^3.11"\nrich = "^13.1"\n',
        "setup.py": b"from setuptools import setup\nsetup(install_requires=['click>=8'])\n",
        "package.json": b'{"dependencies": {"left-pad": "^1.3.0", "mine": "file:../mine"},'
        b' "devDependencies": {"tap": "16.x"}, "optionalDependencies": {"fsevents": "*"}}',
        "node_modules/x/package.json": b'{"dependencies": {"ignored": "1"}}',
    }
    found = {(d.ecosystem, d.name, d.spec, d.optional) for d in declared_dependencies(files)}
    assert found == {
        ("pypi", "requests", ">=2.0", False),
        ("pypi", "pytest", "==8.3.5", False),
        ("pypi", "attrs", ">=23", False),
        ("pypi", "rich", ">=13.1,<14", False),
        ("pypi", "click", ">=8", False),
        ("npm", "left-pad", "^1.3.0", False),
        ("npm", "tap", "16.x", False),
        ("npm", "fsevents", "*", True),
    }


def test_without_offline_sources_every_declared_dependency_is_unavailable():
    deps = [
        Dependency("pypi", "requests", ">=2", "requirements.txt"),
        Dependency("npm", "left-pad", "^1.3.0", "package.json"),
        Dependency("npm", "fsevents", "*", "package.json", optional=True),
    ]
    reasons = dict((d.name, why) for d, why in unavailable(deps, OfflineSources()))
    assert reasons == {
        "requests": "no wheelhouse is configured",
        "left-pad": "no npm cache is configured",
    }


def test_a_wheelhouse_and_an_npm_cache_provide_matching_versions(tmp_path):
    wheelhouse = tmp_path / "wheels"
    wheelhouse.mkdir()
    (wheelhouse / "requests-2.31.0-py3-none-any.whl").write_bytes(b"")
    (wheelhouse / "attrs-22.1.0.tar.gz").write_bytes(b"")
    index = tmp_path / "npm" / "_cacache" / "index-v5" / "ab" / "cd"
    index.mkdir(parents=True)
    key = "make-fetch-happen:request-cache:https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz"
    (index / "entry").write_text("hash\t" + json.dumps({"key": key}) + "\n")
    sources = OfflineSources(wheelhouse=wheelhouse, npm_cache=tmp_path / "npm")
    deps = [
        Dependency("pypi", "requests", ">=2,<3", "r.txt"),
        Dependency("pypi", "attrs", ">=23", "r.txt"),
        Dependency("npm", "left-pad", "^1.2.0", "package.json"),
        Dependency("npm", "left-pad", "^2.0.0", "package.json"),
        Dependency("npm", "x", "github:user/x", "package.json"),
    ]
    missing = [(d.name, d.spec) for d, _ in unavailable(deps, sources)]
    assert missing == [("attrs", ">=23"), ("left-pad", "^2.0.0"), ("x", "github:user/x")]


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("1.3.0", "^1.2.0", True),
        ("2.0.0", "^1.2.0", False),
        ("0.2.5", "^0.2.3", True),
        ("0.3.0", "^0.2.3", False),
        ("0.0.4", "^0.0.3", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("1.9.9", "1.x", True),
        ("2.0.0", "1.x", False),
        ("3.0.0", "*", True),
        ("1.5.0", ">=1.2.0 <2.0.0", True),
        ("2.0.0", ">=1.2.0 <2.0.0", False),
        ("1.0.0", "1.2.0 - 1.4", False),
        ("1.4.7", "1.2.0 - 1.4", True),
        ("3.1.0", "^1.0.0 || ^3.0.0", True),
        ("1.2.3", "1.2.3", True),
        ("1.2.4", "=1.2.3", False),
        ("2.0.0-beta.1", "^2.0.0", False),
        ("1.3.0", ">1.2", True),
        ("1.2.9", ">1.2", False),
        ("1.2.0", "<=1.2", True),
    ],
)
def test_npm_ranges(version, spec, expected):
    assert npm_satisfies(version, spec) is expected


# -- the kit, run on the host --------------------------------------------------------------------


def _kit_module(name: str):
    spec = importlib.util.spec_from_file_location(f"kit_{name}", KIT / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shim_finds_runner_invocations_among_interpreter_options():
    shim = _kit_module("shim")
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


def _run_harness(tmp_path: Path, test_source: str, *extra: str) -> tuple[int, dict]:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_a.py").write_text(textwrap.dedent(test_source))
    result = tmp_path / "out.json"
    ran = subprocess.run(
        [
            sys.executable,
            str(KIT / "unittest_harness.py"),
            str(result),
            NONCE,
            "--",
            "discover",
            "-s",
            "tests",
            *extra,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    return ran.returncode, json.loads(result.read_text()) if result.exists() else {}


def test_the_unittest_harness_reports_real_tests_and_both_controls(tmp_path):
    status, data = _run_harness(
        tmp_path,
        """
        import unittest
        class T(unittest.TestCase):
            def test_ok(self):
                self.assertEqual(1, 1)
    """,
    )
    outcomes = {r["id"].rsplit(".", 1)[-1]: r["outcome"] for r in data["tests"]}
    assert status == 0  # the must-fail control's failure is taken out of the exit status
    assert outcomes == {
        "test_ok": "passed",
        f"test_traj2env_control_must_pass_{NONCE}": "passed",
        f"test_traj2env_control_must_fail_{NONCE}": "failed",
    }


def test_the_unittest_harness_is_not_fooled_by_a_unittest_module_in_the_project(tmp_path):
    (tmp_path / "unittest.py").write_text("import sys\nsys.exit(0)\n")
    status, data = _run_harness(
        tmp_path,
        """
        import unittest
        class T(unittest.TestCase):
            def test_bad(self):
                self.assertEqual(1, 2)
    """,
    )
    assert status == 1
    assert any(r["outcome"] == "failed" and r["id"].endswith("test_bad") for r in data["tests"])


def test_the_unittest_harness_catches_patched_assertions(tmp_path):
    status, data = _run_harness(
        tmp_path,
        """
        import unittest
        unittest.TestCase.assertEqual = lambda *a, **k: None
        class T(unittest.TestCase):
            def test_bad(self):
                self.assertEqual(1, 2)
    """,
    )
    fail = [r for r in data["tests"] if "must_fail" in r["id"]]
    assert status == 1 and fail[0]["outcome"] == "passed"  # the parent reads this as forged


def test_the_pytest_plugin_adds_controls_per_module_and_fixes_the_exit_status(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_a():\n    assert 1 == 1\n")
    env = subprocess_env(PYTHONPATH=str(KIT), TRAJ2ENV_NONCE=NONCE)
    junit = tmp_path / "out.xml"
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "traj2env_pytest_controls",
            f"--junitxml={junit}",
            "-p",
            "no:cacheprovider",
            "tests",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout
    cases = {c.id.rsplit(" > ", 1)[-1]: c.outcome for c in parse_junit(junit.read_bytes())}
    assert cases == {
        "test_a": "passed",
        f"test_traj2env_control_must_pass_{NONCE}": "passed",
        f"test_traj2env_control_must_fail_{NONCE}": "failed",
    }
    # A conftest that marks every report passed flips the must-fail control: caught.
    (tmp_path / "tests" / "conftest.py").write_bytes(
        by_name("conftest_forces_pass").files[".t2e-conftest.py"]
    )
    forged = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "traj2env_pytest_controls",
            f"--junitxml={junit}",
            "-p",
            "no:cacheprovider",
            "tests",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert forged.returncode == 1
    cases = {c.id.rsplit(" > ", 1)[-1]: c.outcome for c in parse_junit(junit.read_bytes())}
    assert cases[f"test_traj2env_control_must_fail_{NONCE}"] == "passed"


def test_python_requirements_are_what_the_project_declares_then_the_checks_runner():
    files = {
        "requirements.txt": b"requests>=2,<3\n-e .\n",
        "pyproject.toml": b'[project]\ndependencies = ["attrs"]\n',
        "package.json": b'{"devDependencies": {"vitest": "^1"}}',  # npm: not a wheel
    }
    assert python_requirements(files, "python -m pytest -q", ".") == [
        "attrs",
        "requests<3,>=2",
        "pytest",
    ]


def test_a_declared_runner_is_not_asked_for_twice_and_the_projects_own_modules_never():
    files = {"requirements-dev.txt": b"pytest==8.3.5\n", "mypkg/__main__.py": b""}
    assert python_requirements(files, "pytest -q && python -m mypkg", ".") == ["pytest==8.3.5"]
    assert python_requirements({}, "python3 -m unittest -v", ".") == []
