"""Authored tasks' trial matrix for real, offline in Docker: the catalogue's example is kept (its
solution full reward three times, the no-op and every control 0), and deliberately weak tasks,
each trusting something the agent controls, are rejected naming the control that won.

The controls that can only win against a verifier that lets them cross (symlinks, a process
left running, the home folder) score 0 on every task here: the weak task that trusts a reward
file in /app shows the links were refused while a plain forged file was not.

Skips when no Docker engine answers or the offline base image is missing. Weak tasks build
FROM the base image's pinned digest, the example FROM its recipe tag: one image each, reused.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tasks_review.core.trials.model import MatrixStatus, Role, TrialStatus
from tests.training.core.authored.helpers import EXAMPLE, WEAK, write_task, write_weak
from tests.training.core.harbor.test_harbor_run import base_ref, engine  # noqa: F401 (fixtures)
from training.core.authored import (
    CATALOGUE,
    AuthoredResult,
    prepare,
    read_authored_task,
    run_matrix,
    verify_authored_task,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BY_NAME = {control.name: control for control in CATALOGUE}


def run_id(what: str) -> str:
    return f"test-authored-{what}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def example(engine) -> AuthoredResult:  # noqa: F811
    return verify_authored_task(EXAMPLE, run_id=run_id("example"), engine=engine)


@pytest.fixture(scope="module")
def weak(base_ref, tmp_path_factory) -> dict[str, Path]:  # noqa: F811
    root = tmp_path_factory.mktemp("weak")
    return {name: write_weak(root, name, base=base_ref) for name in WEAK}


def matrix(engine, task_dir: Path, controls: list[str]) -> AuthoredResult:  # noqa: F811
    spec = read_authored_task(task_dir)
    image = prepare(spec, engine).image_id
    chosen = [BY_NAME[name] for name in controls]
    return run_matrix(spec, image, engine=engine, run_id=run_id("weak"), repeats=1, controls=chosen)


def test_the_example_is_kept_by_the_whole_matrix(example):
    assert example.status is MatrixStatus.KEPT, example.reasons
    oracle = [t for t in example.trials if t.role is Role.ORACLE]
    assert [t.reward for t in oracle] == [1.0, 1.0, 1.0]
    assert [t.reward for t in example.trials if t.role is Role.NOOP] == [0.0]


def test_on_the_example_every_control_runs_and_scores_0(example):
    controls = {t.name: t for t in example.trials if t.role is Role.CONTROL}
    assert sorted(controls) == sorted(BY_NAME)
    for name, trial in controls.items():
        assert (trial.status, trial.reward) == (TrialStatus.GRADED, 0.0), (name, trial.logs)
    assert example.won == ()


def test_the_example_says_why_a_control_scored_0(example):
    forged = next(t for t in example.trials if t.name == "forge_read_files")
    assert "FAIL: a credential file was created at .deploy/credentials" in forged.logs
    links = next(t for t in example.trials if t.name == "symlinks_out_of_project")
    assert {"reward.txt", "deploy.sh", "tests-link"} <= set(links.detail["submission"]["refused"])


@pytest.mark.parametrize("name", sorted(WEAK))
def test_a_weak_task_is_rejected_naming_the_control_that_won(engine, weak, name):  # noqa: F811
    winner = WEAK[name][2]
    result = matrix(engine, weak[name], [winner])
    assert result.status is MatrixStatus.REJECTED
    assert [(t.name, t.reward) for t in result.trials if t.role is not Role.CONTROL] == [
        ("oracle", 1.0),
        ("noop", 0.0),
    ], "the weak task is sound but for what the control exploits"
    assert result.won == (winner,)
    assert any(reason.startswith(f"{winner} scored") for reason in result.reasons)


def test_the_whole_catalogue_on_a_weak_task_names_only_what_beats_it(engine, weak):  # noqa: F811
    result = matrix(engine, weak["trusts-presence"], list(BY_NAME))
    assert result.status is MatrixStatus.REJECTED
    assert result.won == ("forge_read_files",)


def test_links_and_leftover_processes_never_reach_the_verifier(engine, weak):  # noqa: F811
    """A task that trusts /app/reward.txt falls to a forged file and to a process that wrote
    one, but not to a link pointing there: links do not cross."""
    controls = ["forge_reward_files", "symlinks_out_of_project", "background_reward_writer"]
    result = matrix(engine, weak["trusts-reward-file"], controls)
    assert result.won == ("forge_reward_files", "background_reward_writer")
    links = next(t for t in result.trials if t.name == "symlinks_out_of_project")
    assert links.reward == 0.0 and "reward.txt" in links.detail["submission"]["refused"]


def test_a_test_sh_that_writes_no_reward_rejects_the_task(engine, base_ref, tmp_path):  # noqa: F811
    folder = write_task(
        tmp_path / "silent", name="silent", base=base_ref, test_sh="true\n", solve_sh="true\n"
    )
    result = matrix(engine, folder, [])
    assert result.status is MatrixStatus.REJECTED
    assert "oracle #0 scored None (must be 1.0): tests/test.sh wrote no reward" in result.reasons[0]


def test_an_image_missing_from_the_engine_rejects_the_folder_before_any_trial(engine, tmp_path):  # noqa: F811
    base = "traj2env/no-such-image@sha256:" + "0" * 64
    folder = write_task(tmp_path / "t", name="t", base=base, test_sh="true\n", solve_sh="true\n")
    result = verify_authored_task(folder, run_id=run_id("missing"), engine=engine)
    assert (result.status, result.trials) == (MatrixStatus.REJECTED, ())
    assert f"FROM {base}: no such image in this Docker engine" in result.problems[0]
