"""The trial layer without Docker: session records, reward rules, the catalogue, plans, deps,
and the grader kit's runners against the grader's own socket on the host."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
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
    judge_graded_run,
    npm_satisfies,
    plan_check,
    read_sessions,
    unavailable,
)
from tasks_review.core.trials.controls import NPM_SCRIPT, by_name
from tasks_review.core.trials.deps import python_requirements
from tasks_review.core.trials.kit import judging
from tasks_review.core.trials.plan import named_paths
from tests.conftest import subprocess_env

KIT = Path(__file__).resolve().parents[3] / "tasks_review" / "core" / "trials" / "kit"
OK = ExecResult(0, "", "", 0.1)
FAILED_RUN = ExecResult(1, "", "", 0.1)
PLAN = plan_check("python3 -m unittest discover -s tests", ".", {})
COPIES = {
    "test_qwertyuiopasdf": {"of": "t.T.test_a", "fail": False},
    "test_zxcvbnmlkjhgfd": {"of": "t.T.test_a", "fail": True},
}


def session(*cases, copies=COPIES, kind="unittest", complete=True, **extra) -> dict:
    return {
        "kind": kind,
        "argv": ["python -m unittest"],
        "complete": complete,
        "problems": [],
        "cases": [list(c) for c in cases],
        "copies": copies,
        **extra,
    }


def controls(pass_outcome: str = "passed", fail_outcome: str = "failed") -> list[tuple[str, str]]:
    return [("t.T.test_qwertyuiopasdf", pass_outcome), ("t.T.test_zxcvbnmlkjhgfd", fail_outcome)]


# -- session records -----------------------------------------------------------------------------


def test_session_records_are_read_from_the_graders_file_and_junk_lines_skipped():
    records = [session(("t.T.test_a", "passed"), *controls()), session(kind="pytest")]
    text = "\n".join(json.dumps(r) for r in records) + "\nnot json\n[1, 2]\n"
    files = {"traj2env/sessions.jsonl": FileEntry(text.encode())}
    assert [r["kind"] for r in read_sessions(files)] == ["unittest", "pytest"]
    assert read_sessions({}) == []


def test_a_copy_is_known_by_its_planned_name_whatever_the_runner_prefixes():
    names = {"test_qwertyuiopasdf"}
    assert judging.copy_name("t.T.test_qwertyuiopasdf", names) == "test_qwertyuiopasdf"
    assert judging.copy_name("tests/t.py::test_qwertyuiopasdf", names) == "test_qwertyuiopasdf"
    assert judging.copy_name("/app/t.test.js > s > test_qwertyuiopasdf", names)
    assert judging.copy_name("t.T.test_qwertyuiopasdf (i=1)", names)  # a subtest of it
    assert judging.copy_name("t.T.test_a", names) is None


# -- the reward rules ----------------------------------------------------------------------------


def test_all_real_tests_passing_with_controls_behaving_scores_one():
    records = [session(("t.T.test_a", "passed"), *controls())]
    verdict = judge_graded_run(OK, records, PLAN, reference={"t.T.test_a": 1})
    assert (verdict.reward, verdict.reasons) == (1.0, ())
    assert verdict.passed == {"t.T.test_a": 1}


def test_a_must_fail_control_reported_passing_means_forged_results():
    records = [session(("t.T.test_a", "passed"), *controls(fail_outcome="passed"))]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0
    assert "forged in-process" in verdict.reasons[0]


def test_a_verbatim_copy_that_failed_where_its_test_passed_means_forged_results():
    records = [session(("t.T.test_a", "passed"), *controls(pass_outcome="failed"))]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0
    assert "the real test's result was forged" in verdict.reasons[0]


def test_a_session_without_both_kinds_of_control_scores_zero():
    one_kind = {"test_qwertyuiopasdf": COPIES["test_qwertyuiopasdf"]}
    records = [session(("t.T.test_a", "passed"), controls()[0], copies=one_kind)]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0 and "no control copies were planned" in verdict.reasons[0]


def test_a_planned_control_that_never_ran_scores_zero():
    records = [session(("t.T.test_a", "passed"), controls()[0])]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0 and "ran 0 times" in verdict.reasons[0]


def test_missing_results_for_an_expected_runner_score_zero_even_with_exit_zero():
    verdict = judge_graded_run(OK, [], PLAN)
    assert verdict.reward == 0.0
    assert "no unittest results" in verdict.reasons[0]


def test_a_runner_whose_report_never_ended_scores_zero():
    records = [session(("t.T.test_a", "passed"), *controls(), complete=False)]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0 and "ended before the runner finished" in verdict.reasons[0]


def test_a_test_reported_twice_scores_zero_whatever_the_outcomes():
    records = [session(("t.T.test_a", "failed"), ("t.T.test_a", "passed"), *controls())]
    verdict = judge_graded_run(OK, records, PLAN)
    assert verdict.reward == 0.0
    assert any("reported more than once" in r for r in verdict.reasons)


def test_the_graders_findings_score_zero():
    records = [session(("t.T.test_a", "passed"), *controls())]
    finding = "decimal.py shadows the 'decimal' module the tests may import"
    verdict = judge_graded_run(OK, records, PLAN, findings=[finding])
    assert verdict.reasons == (finding,)


def test_tests_that_passed_on_the_reference_must_pass_again_not_vanish_or_skip():
    records = [session(("t.T.test_a", "passed"), ("t.T.test_b", "skipped"), *controls())]
    reference = {"t.T.test_a": 1, "t.T.test_b": 1}
    verdict = judge_graded_run(OK, records, PLAN, reference=reference)
    assert verdict.reward == 0.0
    assert "t.T.test_b" in verdict.reasons[0]


def test_a_failing_check_or_a_timeout_scores_zero():
    records = [session(("t.T.test_a", "passed"), *controls())]
    assert judge_graded_run(FAILED_RUN, records, PLAN).reward == 0.0
    timed_out = ExecResult(None, "", "", 600.0, timed_out=True)
    assert "time limit" in judge_graded_run(timed_out, records, PLAN).reasons[0]


def test_no_real_test_is_not_a_pass():
    verdict = judge_graded_run(OK, [session(*controls())], PLAN)
    assert verdict.reasons == ("unittest: no real test ran",)


def test_a_check_without_a_runner_is_graded_by_exit_status_and_says_so():
    plan = plan_check("test -f build/report.txt", ".", {})
    assert plan.mode == "exit_code"
    assert judge_graded_run(OK, [], plan).reward == 1.0
    assert judge_graded_run(FAILED_RUN, [], plan).grading == "exit_code"


def test_the_check_in_the_image_learns_which_tests_can_serve_as_controls():
    copies = {
        "test_aaaaaaaaaaaaaa": {"of": "t.T.test_a", "fail": False},
        "test_bbbbbbbbbbbbbb": {"of": "t.T.test_a", "fail": True},
        "test_cccccccccccccc": {"of": "t.T.test_b", "fail": False},
        "test_dddddddddddddd": {"of": "t.T.test_b", "fail": True},  # its assertion not reached
    }
    cases = [
        ("t.T.test_a", "passed"),
        ("t.T.test_b", "passed"),
        ("t.T.test_aaaaaaaaaaaaaa", "passed"),
        ("t.T.test_bbbbbbbbbbbbbb", "failed"),
        ("t.T.test_cccccccccccccc", "passed"),
        ("t.T.test_dddddddddddddd", "passed"),
    ]
    records = [session(*cases, copies=copies, baseline=True)]
    verdict = judge_graded_run(OK, records, PLAN, baseline=True)
    assert verdict.reward == 1.0, verdict.reasons
    assert verdict.controls == {"copyable": ["t.T.test_a", "t.T.test_b"], "mutable": ["t.T.test_a"]}
    only_b = {k: v for k, v in copies.items() if v["of"] == "t.T.test_b"}
    records = [session(*cases[1:2], *cases[4:], copies=only_b, baseline=True)]
    verdict = judge_graded_run(OK, records, PLAN, baseline=True)
    assert verdict.reward == 0.0 and "no control could be made" in verdict.reasons[0]


def test_a_runner_exits_0_when_only_its_falsified_copies_failed():
    good = session(("t.T.test_a", "passed"), *controls())
    assert judging.runner_status(good, 1) == 0
    assert judging.runner_status(session(("t.T.test_a", "failed"), *controls()), 1) == 1
    assert judging.runner_status(session(("t.T.test_a", "passed"), *controls("failed")), 0) == 1
    assert judging.runner_status({**good, "problems": ["reported twice"]}, 0) == 1


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


class Grader:
    """The task's grader's socket (``reports.Reports``) in a short temporary kit folder, for the
    kit's runners started on the host (a Unix socket path must stay under 108 bytes)."""

    def __init__(self, project: Path, config: dict) -> None:
        self.kit = Path(tempfile.mkdtemp(prefix="t2e-kit-", dir="/tmp"))
        for name in os.listdir(KIT):
            if name.endswith((".py", ".mjs", ".cjs")) and name != "__init__.py":
                shutil.copy(KIT / name, self.kit / name)
        self.grade = _kit_module("grade")
        planner = self.grade.planning.Planner({"project": str(project), **config})
        self.reports = self.grade.reports.Reports(str(self.kit / "report.sock"), planner)
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
