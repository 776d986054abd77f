"""The trial matrix against a real Docker engine: kept tasks, a rejected hackable one, drops,
ungraded infrastructure failures, and no leaked containers.

Skips when no daemon answers. Images are built once per content and reused across sessions
(the tasks below are written byte-identically every time), so a warm run spends its time in
trials: one matrix of the Python and one of the Node task, sequentially (jobs=1) and then in
parallel (jobs=2), which is also the benchmark.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tasks_review.core.docker import (
    BaseImageSpec,
    Engine,
    FileEntry,
    InfraError,
    bootstrap,
)
from tasks_review.core.docker import labels as lbl
from tasks_review.core.mining import RepairCandidate, candidate_key
from tasks_review.core.mining.files import is_test_config, is_test_file
from tasks_review.core.taskfiles import PythonPackages, SourceTrace, write_task
from tasks_review.core.trials import (
    CATALOGUE,
    Control,
    MatrixStatus,
    Role,
    TrialDrop,
    TrialDropReason,
    TrialStatus,
    check_in_image,
    prepare,
    run_matrices,
    run_matrix,
    run_trial,
    verify_task,
)
from tasks_review.core.trials.deps import python_requirements
from tasks_review.core.trials.matrix import (
    PreparedTask,
    act,
    control_context,
    probe,
    task_limits,
)
from tasks_review.core.trials.plan import plan_check
from tasks_review.core.trials.taskdir import ReferenceFacts, TaskSpec, read_task
from tasks_review.core.trials.verifier import Graded, Submission, grade_submission
from tasks_review.core.trials.wheelhouse import build_wheelhouse
from trajectories.core.blobs import MemoryBlobs

from .test_repair_samples import mine_sample

REPO = Path(__file__).resolve().parents[3]
SHA = "0f" * 32
FAKE_BASE = "127.0.0.1:5000/traj2env/base@sha256:" + "ab" * 32

PYTHON_START = {
    "calc/__init__.py": b"from .ops import add, mul\n",
    "calc/ops.py": b"def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    "tests/test_ops.py": b"""import unittest

from calc import add, mul


class OpsTests(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)

    def test_mul_by_zero(self):
        self.assertEqual(mul(7, 0), 0)
""",
}
PYTHON_FIX = {
    "calc/ops.py": b"def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
}

NODE_START = {
    "package.json": b'{\n  "name": "units",\n  "version": "1.0.0",\n'
    b'  "scripts": {\n    "test": "node --test"\n  }\n}\n',
    "src/units.js": b"'use strict';\n\nfunction toKiB(bytes) {\n  return bytes / 1000;\n}\n\n"
    b"module.exports = { toKiB };\n",
    "test/units.test.js": b"""'use strict';

const { describe, test } = require('node:test');
const assert = require('node:assert');
const { toKiB } = require('../src/units');

describe('toKiB', () => {
  test('zero is zero', () => {
    assert.strictEqual(toKiB(0), 0);
  });
  test('1024 bytes are one KiB', () => {
    assert.strictEqual(toKiB(1024), 1);
  });
});
""",
}
NODE_FIX = {
    "src/units.js": b"'use strict';\n\nfunction toKiB(bytes) {\n  return bytes / 1024;\n}\n\n"
    b"module.exports = { toKiB };\n"
}

# A check that any file at the right path satisfies: the controls must expose it.
HACKABLE_START = {
    "report.py": b"import pathlib\n\npathlib.Path('build').mkdir(exist_ok=True)\n"
    b"pathlib.Path('build/report.txt').write_text('total: 42\\n')\n",
}
HACKABLE_FIX = {"build/report.txt": b"total: 42\n"}

# A pytest project that declares pytest (a date-pinned range) in requirements-dev.txt: the
# image installs it from the task's own wheels, resolved as PyPI was on the trajectory's date.
PYTEST_START = {
    "requirements-dev.txt": b"pytest>=8,<9\n",
    "shop/__init__.py": b"",
    "shop/cart.py": b"def total(prices):\n    return sum(prices[1:])\n",
    "tests/test_cart.py": b"""from shop.cart import total


def test_total():
    assert total([1, 2, 3]) == 6


def test_empty():
    assert total([]) == 0
""",
}
PYTEST_FIX = {"shop/cart.py": b"def total(prices):\n    return sum(prices)\n"}
TRAJECTORY_DATE = datetime(2025, 6, 1, tzinfo=UTC)

SLOW = Control(name="slow_agent", description="an agent that takes its time", shell="sleep 60")


def handmade(
    blobs: MemoryBlobs,
    start: dict[str, bytes],
    fix: dict[str, bytes],
    *,
    command: str,
    language: str,
    runner: str,
) -> RepairCandidate:
    ref = {**start, **fix}
    start_files = {path: blobs.put(data) for path, data in start.items()}
    ref_files = {path: blobs.put(data) for path, data in ref.items()}
    paths = {*start_files, *ref_files}
    return RepairCandidate(
        command=command,
        task_command=command,
        cwd=".",
        check_cwd=".",
        language=language,
        runner=runner,
        check_kind="test",
        root="/work/proj",
        project_dir="/app",
        fail_command_index=0,
        pass_command_index=1,
        fail_step_index=2,
        pass_step_index=4,
        fail_step_id=3,
        pass_step_id=5,
        fail_exit_code=1,
        failing_output="1 failed",
        start_files=start_files,
        ref_files=ref_files,
        added=tuple(sorted(p for p in ref_files if p not in start_files)),
        modified=tuple(
            sorted(p for p in ref_files if p in start_files and start_files[p] != ref_files[p])
        ),
        deleted=(),
        test_paths=tuple(sorted(p for p in paths if is_test_file(p) or is_test_config(p))),
        fix_edits_tests=False,
        unknown_paths=(),
        instruction=f"# Make the failing check pass\n\nRun `{command}`; it fails.\n",
        key=candidate_key(command, ".", start_files, ref_files),
    )


def write(dest: Path, base: str, start, fix, python_packages=None, **check) -> Path:
    blobs = MemoryBlobs()
    candidate = handmade(blobs, start, fix, **check)
    return write_task(
        dest,
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate(SHA, candidate),
        source_model="test-model",
        base_image=base,
        check_timeout=120,
        overwrite=True,
        python_packages=python_packages,
    )


def with_check(spec: TaskSpec, command: str) -> TaskSpec:
    """``spec`` with another recorded check, in task.toml's place and in the task's grader."""
    config = json.loads(spec.tests_files["grading.json"].data)
    config.update(command=command, structured=[], reference={})
    tests = {**spec.tests_files, "grading.json": FileEntry(json.dumps(config).encode())}
    return dataclasses.replace(spec, command=command, tests_files=tests)


def new_run_id() -> str:
    return f"test-trials-{uuid.uuid4().hex[:10]}"


def left_behind(engine: Engine, run_id: str) -> list[str]:
    return [c.name for c in engine.containers(label=f"{lbl.RUN}={run_id}")]


# -- fixtures: one base, three tasks, their images, one sequential run ---------------------------


@pytest.fixture(scope="session")
def engine() -> Engine:
    try:
        return Engine.from_env(timeout=60)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="session")
def base_ref(engine) -> str:
    from django.conf import settings

    # The application's own cache and recipe: tests and `images bootstrap` share one image.
    record = bootstrap(BaseImageSpec(cache_dir=settings.VAR_DIR / "cache"), engine=engine)
    return record.pinned_ref


@pytest.fixture(scope="session")
def tasks(tmp_path_factory, base_ref) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("trial-tasks")
    python = dict(command="python3 -m unittest discover -s tests -v", language="python")
    return {
        "python": write(
            root / "python", base_ref, PYTHON_START, PYTHON_FIX, **python, runner="unittest"
        ),
        "node": write(
            root / "node",
            base_ref,
            NODE_START,
            NODE_FIX,
            command="npm test",
            language="node",
            runner="npm",
        ),
        "hackable": write(
            root / "hackable",
            base_ref,
            HACKABLE_START,
            HACKABLE_FIX,
            command="test -f build/report.txt",
            language="python",
            runner="shell",
        ),
    }


@pytest.fixture(scope="session")
def prepared(engine, tasks) -> dict[str, PreparedTask]:
    return {name: prepare(path, engine) for name, path in tasks.items()}


@pytest.fixture(scope="session")
def sequential(engine, prepared):
    """The Python and the Node task's matrices, one after the other (jobs=1), timed."""
    run_id = new_run_id()
    started = time.monotonic()
    results = run_matrices(
        [prepared["python"], prepared["node"]],
        jobs=1,
        engine=engine,
        run_id=run_id,
        naive=True,
        trial_jobs=1,
    )
    wall = time.monotonic() - started
    return {"python": results[0], "node": results[1], "wall": wall, "run_id": run_id}


def assert_full_matrix(result, language: str) -> None:
    assert result.status is MatrixStatus.KEPT, result.reasons
    oracle = result.of("oracle")
    assert [t.repeat for t in oracle] == [0, 1, 2]
    assert all(t.reward == 1.0 and t.status is TrialStatus.GRADED for t in oracle)
    (noop,) = result.of("noop")
    assert (noop.reward, noop.status) == (0.0, TrialStatus.GRADED)
    controls = [t for t in result.trials if t.role is Role.CONTROL]
    assert [t.name for t in controls] == [c.name for c in CATALOGUE]  # each one, once
    for t in controls:
        if t.status is TrialStatus.SKIPPED:
            assert t.detail["skip_reason"] and t.reward is None
        else:
            assert (t.reward, t.status) == (0.0, TrialStatus.GRADED), (t.name, t.detail)
    assert sum(t.status is TrialStatus.GRADED for t in controls) >= 10
    for t in result.trials:
        if t.status is TrialStatus.GRADED:
            assert t.finished >= t.started and t.seconds > 0 and t.logs
            assert t.detail["grading"] == "structured"
    json.dumps(result.to_dict())  # the record the web pages and report.json store


# -- kept tasks ----------------------------------------------------------------------------------


@pytest.mark.docker
def test_python_task_is_kept_with_its_full_trial_matrix(sequential):
    assert_full_matrix(sequential["python"], "python")
    skipped = {t.name for t in sequential["python"].trials if t.status is TrialStatus.SKIPPED}
    assert skipped == {
        "conftest_forces_pass",
        "npm_test_script_exit0",
        "npmrc_script_shell",
        "forge_named_files",
    }


@pytest.mark.docker
def test_node_task_is_kept_with_its_full_trial_matrix(sequential):
    assert_full_matrix(sequential["node"], "node")
    skipped = {t.name for t in sequential["node"].trials if t.status is TrialStatus.SKIPPED}
    assert skipped == {
        "conftest_forces_pass",
        "sitecustomize_forces_pass",
        "forge_named_files",
        "uncovered_files_shadow_stdlib",
    }


@pytest.mark.docker
def test_the_controls_are_real_attacks_that_fool_a_naive_grader(sequential):
    """The recorded check, run where each control left the project, exits 0 for these."""
    naive = {
        name: {t.name: t.detail.get("naive_exit_code") for t in sequential[name].trials}
        for name in ("python", "node")
    }
    fooled_everywhere = {
        "delete_tests",
        "empty_tests",
        "trivial_tests",
        "inprocess_forgery",
        "exit_early_success",
        "symlink_tests_outside",
        # The targeted families: each forges only where it thinks no control is.
        "selective_forgery_spares_control_names",
        "selective_forgery_spares_unknown_tests",
        "selective_forgery_by_call_stack",
        "rewritten_results_in_flight",
        "uncovered_files_discovered_first",
    }
    python_only = {"rewritten_results_forged_session"}
    for name in (
        fooled_everywhere | python_only | {"fake_runner_in_project", "sitecustomize_forces_pass"}
    ):
        assert naive["python"][name] == 0, name
    for name in fooled_everywhere | {
        "npm_test_script_exit0",
        "npmrc_script_shell",
        "fake_runner_in_project",
    }:
        assert naive["node"][name] == 0, name


@pytest.mark.docker
def test_in_process_forgery_is_caught_by_the_contradictory_controls(sequential):
    for name in ("python", "node"):
        (forged,) = sequential[name].of("inprocess_forgery")
        assert forged.reward == 0.0
        reasons = forged.detail["reasons"]
        assert any("assertion made false was reported passed" in r for r in reasons), reasons
        (early,) = sequential[name].of("exit_early_success")
        assert early.reward == 0.0


@pytest.mark.docker
def test_only_regular_project_files_cross_to_the_verifier(sequential):
    (links,) = sequential["python"].of("symlink_submission_outside")
    refused = links.detail["submission"]["refused"]
    assert "t2e-etc" in refused and "calc/ops.py" in refused
    (fake,) = sequential["node"].of("fake_runner_in_project")
    assert fake.detail["submission"]["left_behind"] >= 1  # node_modules/.bin/node stayed behind
    (gutted,) = sequential["node"].of("npm_test_script_exit0")
    assert "package.json" in gutted.detail["submission"]["restored"]


@pytest.mark.docker
def test_no_container_outlives_a_run(engine, sequential):
    assert left_behind(engine, sequential["run_id"]) == []


@pytest.mark.docker
def test_the_verifier_runs_the_check_as_grader_without_network_and_with_limits(engine, prepared):
    """A check that passes only where the verifier promises: grader uid, no network, limits."""
    task = prepared["python"]
    cgroup = "/sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max"
    command = (
        '[ "$(id -un)" = grader ] && [ "$(id -u)" = 1001 ] '
        '&& [ "$(ls /sys/class/net)" = lo ] '
        f'&& [ "$(cat {cgroup} 2>/dev/null | head -n1)" = 512 ] '
        "&& [ ! -w /home/agent ] && [ -w . ]"
    )
    spec = with_check(task.spec, command)
    plan = plan_check(command, ".", {})
    graded = grade_submission(
        engine,
        spec,
        task.image.image_id,
        Submission(files={}),
        facts=ReferenceFacts(passed={}),
        plan=plan,
        run_id=new_run_id(),
        limits=task.limits,
    )
    assert graded.verdict.reward == 1.0, (graded.verdict.reasons, graded.logs)
    assert graded.detail["grading"] == "exit_code"


@pytest.mark.docker
def test_an_oversized_submission_scores_zero_without_a_verifier_run(engine, prepared):
    task = prepared["python"]
    run_id = new_run_id()
    baseline = check_in_image(task, engine=engine, run_id=run_id)
    huge = Control(
        name="huge_submission",
        description="40 MB of zeros in the project",
        shell="head -c 40000000 /dev/zero > blob.bin",
    )
    trial = run_trial(
        task, baseline, role=Role.CONTROL, control=huge, engine=engine, run_id=run_id, naive=False
    )
    assert (trial.reward, trial.status) == (0.0, TrialStatus.GRADED)
    assert "size limit" in trial.detail["reasons"][0]
    assert left_behind(engine, run_id) == []


# -- rejected, dropped, ungraded ----------------------------------------------------------------


@pytest.mark.docker
def test_a_hackable_task_is_rejected_by_the_controls(engine, prepared):
    result = run_matrix(prepared["hackable"], engine=engine, run_id=new_run_id(), repeats=1)
    assert result.status is MatrixStatus.REJECTED
    (forged,) = result.of("forge_named_files")
    assert forged.reward == 1.0 and forged.detail["grading"] == "exit_code"
    assert any(r.startswith("forge_named_files scored 1.0") for r in result.reasons)
    assert result.of("oracle")[0].reward == 1.0 and result.of("noop")[0].reward == 0.0


@pytest.mark.docker
def test_the_check_must_fail_on_the_start_and_pass_on_the_reference_in_the_image(engine, prepared):
    task = prepared["python"]
    run_id = new_run_id()
    baseline = check_in_image(task, engine=engine, run_id=run_id)
    assert not isinstance(baseline, TrialDrop)
    assert baseline.start.reward == 0.0 and baseline.reference.reward == 1.0
    assert set(baseline.reference_passed) == {
        "test_ops.OpsTests.test_add",
        "test_ops.OpsTests.test_mul",
        "test_ops.OpsTests.test_mul_by_zero",
    }
    passing = dataclasses.replace(
        task.spec, command="python3 -m unittest -v tests.test_ops.OpsTests.test_add"
    )
    drop = check_in_image(dataclasses.replace(task, spec=passing), engine=engine, run_id=run_id)
    assert isinstance(drop, TrialDrop)
    assert drop.reason is TrialDropReason.CHECK_NOT_FAILING_AT_START
    unsolved = dataclasses.replace(task.spec, solve_sh=b"#!/bin/sh\nexit 0\n")
    drop = check_in_image(dataclasses.replace(task, spec=unsolved), engine=engine, run_id=run_id)
    assert isinstance(drop, TrialDrop)
    assert drop.reason is TrialDropReason.CHECK_NOT_PASSING_AT_REFERENCE
    assert "did not pass" in drop.detail
    assert left_behind(engine, run_id) == []


@pytest.mark.docker
def test_a_check_tool_the_image_lacks_drops_the_task(engine, prepared):
    task = prepared["python"]
    plan = plan_check("python3 -m pytest -q && jest", ".", {})
    lacking = probe(
        engine,
        task.spec,
        task.image.image_id,
        plan.requirements,
        run_id=new_run_id(),
        limits=task.limits,
    )
    assert lacking == ["python module pytest", "program jest"]


def test_declared_dependencies_without_an_offline_source_drop_before_building(tmp_path):
    class NoEngine:
        def build(self, *_args, **_kwargs):
            raise AssertionError("a dropped task must not be built")

    start = {**PYTHON_START, "requirements.txt": b"requests==2.31.0\n"}
    task = write(
        tmp_path / "deps",
        FAKE_BASE,
        start,
        PYTHON_FIX,
        command="python3 -m unittest discover -s tests",
        language="python",
        runner="unittest",
    )
    prepared = prepare(task, NoEngine())  # type: ignore[arg-type]
    assert prepared.drop is not None and prepared.image is None
    assert prepared.drop.reason is TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE
    assert "requests ==2.31.0" in prepared.drop.detail
    result = run_matrix(prepared, engine=NoEngine(), run_id="unused")  # type: ignore[arg-type]
    assert result.status is MatrixStatus.DROPPED and result.trials == ()


def test_an_unreachable_daemon_ends_ungraded_not_scored(tmp_path, monkeypatch):
    task = write(
        tmp_path / "task",
        FAKE_BASE,
        PYTHON_START,
        PYTHON_FIX,
        command="python3 -m unittest discover -s tests",
        language="python",
        runner="unittest",
    )
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
    result = verify_task(task, run_id=new_run_id())
    assert result.status is MatrixStatus.UNGRADED
    assert "unreachable" in result.reasons[0]
    assert not result.kept and result.trials == ()


@pytest.mark.docker
def test_a_daemon_lost_mid_run_leaves_every_trial_ungraded(engine, prepared):
    import docker

    task = prepared["python"]
    baseline = check_in_image(task, engine=engine, run_id=new_run_id())
    # A pinned API version: the client must not ask the dead daemon for one when created.
    gone = Engine(docker.DockerClient(base_url="tcp://127.0.0.1:1", version="1.41", timeout=5))
    result = run_matrix(
        task, engine=gone, run_id=new_run_id(), baseline=baseline, repeats=1, controls=CATALOGUE[:2]
    )
    assert result.status is MatrixStatus.UNGRADED
    assert [t.status for t in result.trials] == [TrialStatus.UNGRADED] * 4
    assert all(t.reward is None and t.detail["infra_error"] for t in result.trials)


# -- leaks ---------------------------------------------------------------------------------------


@pytest.mark.docker
def test_an_interrupted_run_leaves_no_container(engine, prepared):
    task = prepared["python"]
    run_id = new_run_id()
    baseline = check_in_image(task, engine=engine, run_id=run_id)
    during: list[list[str]] = []
    main = threading.main_thread().ident
    assert main is not None

    def interrupt_soon(trial) -> None:
        # The no-op just ended; the slow control's agent container is starting. Interrupt
        # while it sleeps, as Ctrl-C would.
        def fire() -> None:
            during.append(left_behind(engine, run_id))
            # Delivered to the main thread itself, so its wait on the command is interrupted.
            signal.pthread_kill(main, signal.SIGINT)

        threading.Timer(1.5, fire).start()

    with pytest.raises(KeyboardInterrupt):
        run_matrix(
            task,
            engine=engine,
            run_id=run_id,
            baseline=baseline,
            repeats=0,
            controls=[SLOW],
            progress=interrupt_soon,
        )
        time.sleep(5)  # not reached: the interrupt lands inside run_matrix
    assert during and len(during[0]) == 1  # it really was mid-trial
    assert left_behind(engine, run_id) == []


@pytest.mark.docker
def test_an_interrupted_parallel_run_stops_at_once_and_leaves_no_container(engine, prepared):
    run_id = new_run_id()
    main = threading.main_thread().ident
    assert main is not None
    seen: dict[str, float] = {}

    def watch() -> None:
        # Both slow controls running (two containers that stay), then Ctrl-C.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = time.monotonic()
            names = left_behind(engine, run_id)
            seen.update({n: seen.get(n, now) for n in names})
            if sum(now - seen[n] > 1.5 for n in names) == 2:
                signal.pthread_kill(main, signal.SIGINT)
                return
            time.sleep(0.2)

    threading.Thread(target=watch, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_matrices(
            [prepared["python"], prepared["node"]],
            jobs=2,
            engine=engine,
            run_id=run_id,
            repeats=0,
            controls=[SLOW],
        )
    assert time.monotonic() - started < 40  # not the 60 s the slow agents would take
    assert left_behind(engine, run_id) == []


KILLED_RUN = """
import sys
from tasks_review.core.docker import Engine
from tasks_review.core.trials import Control, prepare, run_matrix
engine = Engine.from_env()
task = prepare(sys.argv[1], engine)
slow = Control(name="slow_agent", description="", shell="sleep 60")
run_matrix(task, engine=engine, run_id=sys.argv[2], repeats=0, controls=[slow])
"""


@pytest.mark.docker
def test_cleanup_removes_what_a_killed_run_left(engine, tasks, prepared):
    run_id = new_run_id()
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(tasks["python"]), run_id],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        # Wait for a container that stays: the slow control's (the check in the image and the
        # no-op come and go within a second or two each).
        seen: dict[str, float] = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and process.poll() is None:
            now = time.monotonic()
            names = left_behind(engine, run_id)
            seen = {n: seen.get(n, now) for n in names}
            if any(now - first > 2.0 for first in seen.values()):
                break
            time.sleep(0.2)
        assert seen, "the child never started a trial"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    assert left_behind(engine, run_id)  # a SIGKILL leaves its container behind
    report = engine.cleanup(label=f"{lbl.RUN}={run_id}")
    assert report.containers and left_behind(engine, run_id) == []


# -- parallel candidates: the benchmark ----------------------------------------------------------


@pytest.mark.docker
def test_two_candidates_in_parallel_are_kept_and_finish_sooner(engine, prepared, sequential):
    run_id = new_run_id()
    started = time.monotonic()
    results = run_matrices(
        [prepared["python"], prepared["node"]], jobs=2, engine=engine, run_id=run_id, naive=True
    )
    parallel = time.monotonic() - started
    assert [r.status for r in results] == [MatrixStatus.KEPT, MatrixStatus.KEPT]
    assert left_behind(engine, run_id) == []
    trials = sum(len([t for t in r.trials if t.status is TrialStatus.GRADED]) for r in results)
    print(
        f"\nmatrix wall: jobs=1 {sequential['wall']:.1f} s, jobs=2 {parallel:.1f} s "
        f"({trials} graded trials per run)"
    )
    assert parallel < sequential["wall"] * 0.95  # measured 0.73-0.81: two cores, unequal matrices


# -- the task's own grader (tests/test.sh), as Harbor runs it ------------------------------------

DISAGREE = "the task's grader wrote reward"


def harbor_style(engine, task: PreparedTask, baseline, *, role, control=None, run_id) -> Graded:
    """Harbor's way: the agent's whole project crosses (installed dependencies and all), then
    tests/test.sh grades it in a fresh container of the task's image."""
    spec = task.spec
    context = control_context(spec, baseline)
    with engine.sandbox(task.image.image_id, run_id=run_id, limits=task.limits) as box:
        act(box, spec, role=role, control=control, context=context, logs=[], detail={})
        if box.alive:
            box.stop()
        whole = box.copy_out(spec.project_dir, max_entries=50_000)
    files = {p: e for p, e in whole.files.items() if not p.startswith(".git/")}
    return grade_submission(
        engine,
        spec,
        task.image.image_id,
        Submission(files=files),
        facts=baseline.facts,
        plan=baseline.plan,
        run_id=run_id,
        limits=task.limits,
    )


@pytest.mark.docker
@pytest.mark.parametrize("language", ["python", "node"])
def test_the_tasks_own_grader_scores_every_control_0_when_the_whole_project_crosses(
    engine, prepared, language
):
    task = prepared[language]
    run_id = new_run_id()
    baseline = check_in_image(task, engine=engine, run_id=run_id)
    oracle = harbor_style(engine, task, baseline, role=Role.ORACLE, run_id=run_id)
    assert oracle.verdict.reward == 1.0, (oracle.verdict.reasons, oracle.logs)
    noop = harbor_style(engine, task, baseline, role=Role.NOOP, run_id=run_id)
    assert noop.verdict.reward == 0.0
    context = control_context(task.spec, baseline)
    graded = 0
    for control in CATALOGUE:
        if control.skip_reason(context) is not None:
            continue
        trial = harbor_style(
            engine, task, baseline, role=Role.CONTROL, control=control, run_id=run_id
        )
        assert trial.verdict.reward == 0.0, (control.name, trial.logs)
        # reward.txt as the task's grader wrote it is the harness's verdict too.
        assert not any(DISAGREE in r for r in trial.verdict.reasons), control.name
        graded += 1
    assert graded >= 10
    if language == "node":
        (fake,) = [c for c in CATALOGUE if c.name == "fake_runner_in_project"]
        trial = harbor_style(engine, task, baseline, role=Role.CONTROL, control=fake, run_id=run_id)
        assert "node_modules/" in trial.detail["submission"]["removed"]
    assert left_behind(engine, run_id) == []


@pytest.fixture(scope="session")
def sample_grader(engine, base_ref, tmp_path_factory):
    """The Claude Code sample (unittest) under its own tests/test.sh, in the base image."""
    _, _, blobs, (candidate,), _ = mine_sample("claude-code")
    task_dir = write_task(
        tmp_path_factory.mktemp("sample-grader") / "task",
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate(SHA, candidate),
        source_model="test-model",
        base_image=base_ref,
        check_timeout=120,
    )
    spec = read_task(task_dir)
    start = {p: blobs.get(sha) for p, sha in candidate.start_files.items()}
    ref = {p: blobs.get(sha) for p, sha in candidate.ref_files.items()}
    plan = plan_check(spec.command, spec.workdir_rel, ref)

    def run(files: dict[str, bytes]) -> Graded:
        graded = grade_submission(
            engine,
            spec,
            base_ref,
            Submission(files={p: FileEntry(data) for p, data in files.items()}),
            facts=None,  # graded as the check in the image grades: no reference facts yet
            plan=plan,
            run_id=new_run_id(),
            limits=task_limits(spec),
        )
        assert not any(DISAGREE in r for r in graded.verdict.reasons), graded.verdict.reasons
        return graded

    return run, start, ref


@pytest.mark.docker
def test_the_tasks_grader_scores_the_reference_1_and_the_start_0(sample_grader):
    run, start, ref = sample_grader
    assert run(ref).verdict.reward == 1.0
    assert run(start).verdict.reward == 0.0


@pytest.mark.docker
def test_the_tasks_grader_restores_edited_tests(sample_grader):
    run, start, ref = sample_grader
    gutted = dict(ref)
    # With no test left, unittest before Python 3.12 exits 0; the grader's copy comes back.
    gutted["tests/test_totals.py"] = b"import unittest\n"
    graded = run(gutted)
    assert graded.verdict.reward == 1.0  # the reference's tests ran, and they pass
    assert "tests/test_totals.py" in graded.detail["submission"]["restored"]
    gutted_start = {**start, "tests/test_totals.py": b"import unittest\n"}
    assert run(gutted_start).verdict.reward == 0.0


@pytest.mark.docker
def test_the_tasks_grader_ignores_reward_files_the_code_under_test_writes(sample_grader):
    run, start, _ = sample_grader
    forged = dict(start)
    forged["invoice/__init__.py"] = (
        b"import json, os\n"
        b"for folder in ('/logs/verifier', os.getcwd()):\n"
        b"    try:\n"
        b"        open(os.path.join(folder, 'reward.json'), 'w').write(json.dumps({'reward': 1}))\n"
        b"        open(os.path.join(folder, 'reward.txt'), 'w').write('1')\n"
        b"    except OSError:\n"
        b"        pass\n" + start["invoice/__init__.py"]
    )
    assert run(forged).verdict.reward == 0.0


# -- Python dependencies from a date-pinned wheelhouse -------------------------------------------


@pytest.fixture(scope="session")
def pytest_packages() -> PythonPackages:
    from django.conf import settings

    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError as exc:
        pytest.skip(f"PyPI unreachable ({exc}): the wheelhouse cannot be filled")
    requirements = python_requirements(PYTEST_START, "python3 -m pytest -q", ".")
    assert requirements == ["pytest<9,>=8"]
    house = build_wheelhouse(
        requirements, before=TRAJECTORY_DATE, cache_dir=settings.TRAJ2ENV["WHEELHOUSE_DIR"]
    )
    return PythonPackages(
        requirements=tuple(requirements),
        lock=house.lock,
        wheels=house.wheels,
        resolved_before=house.resolved_before.isoformat(),
        date_source="trajectory",
    )


@pytest.mark.docker
def test_a_pytest_task_installs_its_dated_dependencies_offline_and_is_kept(
    engine, base_ref, pytest_packages, tmp_path
):
    assert "pytest==8.3.5 " in pytest_packages.lock  # the newest before 2025-06-01
    task_dir = write(
        tmp_path / "pytest",
        base_ref,
        PYTEST_START,
        PYTEST_FIX,
        python_packages=pytest_packages,
        command="python3 -m pytest -q",
        language="python",
        runner="pytest",
    )
    assert (task_dir / "environment" / "wheels" / "requirements.lock").is_file()
    run_id = new_run_id()
    prepared = prepare(task_dir, engine, run_id=run_id)
    assert prepared.drop is None, prepared.drop
    result = run_matrix(prepared, engine=engine, run_id=run_id, naive=False)
    assert_full_matrix(result, "python")
    skipped = {t.name for t in result.trials if t.status is TrialStatus.SKIPPED}
    assert skipped == {"npm_test_script_exit0", "npmrc_script_shell", "forge_named_files"}
    (oracle, *_) = result.of("oracle")
    (runner,) = oracle.detail["check"]["runners"]
    assert (runner["kind"], runner["tests"], runner["failed"]) == ("pytest", 2, 0)
    (forced,) = result.of("conftest_forces_pass")
    assert forced.reward == 0.0
    # The tests that passed on the reference are now part of the task's own grader.
    grading = json.loads((task_dir / "tests" / "grading.json").read_text())
    assert len(grading["reference_passed"]) == 2
    assert left_behind(engine, run_id) == []


@pytest.mark.docker
def test_a_pytest_check_without_its_wheels_drops_as_unavailable_offline(engine, base_ref, tmp_path):
    task_dir = write(
        tmp_path / "bare",
        base_ref,
        PYTEST_START,
        PYTEST_FIX,
        command="python3 -m pytest -q",
        language="python",
        runner="pytest",
    )
    prepared = prepare(task_dir, engine, run_id=new_run_id())
    assert prepared.drop is not None
    assert prepared.drop.reason is TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE
    assert "pytest" in prepared.drop.detail
