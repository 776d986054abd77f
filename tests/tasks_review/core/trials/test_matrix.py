"""The trial matrix against a real Docker engine: kept tasks, a rejected hackable one, ungraded
infrastructure failures, no leaked containers; and the decision rules, without Docker.

Skips when no daemon answers. Images are built once per content and reused across sessions
(the tasks are written byte-identically every time), so a warm run spends its time in
trials: one matrix of the Python and one of the Node task, sequentially (jobs=1), and the two
again in parallel (jobs=2) with the oracle and the no-op alone (the wall-time comparison of the
two is `benchmarks/bench_trials.py --parallel`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import pytest

from groundwork.core.docker import Engine
from groundwork.core.docker import docker_labels as lbl
from tasks_review.core.trials import (
    CATALOGUE,
    MatrixStatus,
    Role,
    TrialRecord,
    TrialStatus,
    check_in_image,
    decide,
    prepare,
    run_matrices,
    run_matrix,
    verify_task,
)

from .helpers import (
    FAKE_BASE,
    PYTEST_FIX,
    PYTEST_START,
    PYTHON_FIX,
    PYTHON_START,
    REPO,
    SLOW,
    assert_full_matrix,
    left_behind,
    new_run_id,
    write,
)

# -- kept tasks ------------------------------------------------------------------------------------


@pytest.mark.docker
def test_python_task_is_kept_with_its_full_trial_matrix(sequential):
    assert_full_matrix(sequential["python"], "python")
    assert sequential["python"].grading["grading"] == "equivalence"
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
    assert sequential["node"].grading["grading"] == "equivalence"
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


# -- rejected, ungraded ----------------------------------------------------------------------------


@pytest.mark.docker
def test_a_hackable_task_is_rejected_by_the_controls(engine, prepared):
    result = run_matrix(prepared["hackable"], engine=engine, run_id=new_run_id(), repeats=1)
    assert result.status is MatrixStatus.REJECTED
    (forged,) = result.of("forge_named_files")
    assert forged.reward == 1.0 and forged.detail["grading"] == "exit_code"
    assert any(r.startswith("forge_named_files scored 1.0") for r in result.reasons)
    assert result.of("oracle")[0].reward == 1.0 and result.of("noop")[0].reward == 0.0


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


# -- decisions -------------------------------------------------------------------------------------


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


# -- leaks -----------------------------------------------------------------------------------------


@pytest.mark.docker
def test_an_interrupted_run_leaves_no_container(engine, prepared, ctrl_c):
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
def test_an_interrupted_parallel_run_stops_at_once_and_leaves_no_container(
    engine, prepared, ctrl_c
):
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
from groundwork.core.docker import Engine
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


# -- parallel candidates ---------------------------------------------------------------------------


@pytest.mark.docker
def test_two_candidates_in_parallel_are_both_kept_and_leave_no_container(engine, prepared):
    # Whether two lanes finish sooner than one is a wall-time comparison, which load on the
    # machine decides as much as the code: `benchmarks/bench_trials.py --parallel` measures it.
    run_id = new_run_id()
    results = run_matrices(
        [prepared["python"], prepared["node"]], jobs=2, engine=engine, run_id=run_id, controls=[]
    )
    assert [r.status for r in results] == [MatrixStatus.KEPT, MatrixStatus.KEPT]
    assert all(r.of("noop") and len(r.of("oracle")) == 3 for r in results)
    assert left_behind(engine, run_id) == []
