"""`harbor run` on two kept sample tasks, offline, through our environment on the Docker seam:
the oracle scores 1 and the no-op 0 by Harbor's own trial and verifier flow, the jobs folder
reads back as rollouts linked to their tasks, each collected /app is re-graded by the task's own
separate verifier to the same reward, and no container is left.

Skips when no Docker engine answers; builds the offline base image when missing. Keeping the
two tasks (the trial matrix, every control, one oracle repeat) is most of the time; images are
reused.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from harbor.models.task.config import NetworkMode, NetworkPolicy
from harbor.models.task.task import Task
from harbor.models.trial.paths import TrialPaths
from harbor.models.trial.result import TrialResult

from groundwork.core.docker import Engine
from tasks_review.core.trials import TrialStatus, read_task
from tests.training.conftest import HARBOR_GROUP
from training.core.harbor.environment import OfflineDockerEnvironment
from training.core.harbor.jobs import Status, read_jobs, task_digest
from training.core.harbor.regrade import TaskGrader

from .helpers import (  # noqa: F401 (harbor_run: the other modules import it from here)
    ENVIRONMENT,
    SAMPLES,
    harbor_run,
    left_behind,
    new_run_id,
    run_coroutine,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, HARBOR_GROUP]


@pytest.fixture(scope="module")
def engine(harbor_engine) -> Engine:
    return (
        harbor_engine  # the session's (tests/training/conftest.py), for the modules that import it
    )


@pytest.fixture(scope="module")
def base_ref(harbor_base_ref) -> str:
    return harbor_base_ref


def by_task(runs, kept) -> dict[tuple[str, str], object]:
    names = {read_task(path).name: fmt for fmt, path in kept.items()}
    return {(t.agent.name, names[t.task_name]): t for t in runs["trials"]}


def test_harbor_scores_the_oracle_1_and_the_nop_0_through_our_environment(runs, kept):
    trials = by_task(runs, kept)
    assert sorted(trials) == [(a, f) for a in ("nop", "oracle") for f in sorted(SAMPLES)]
    for (agent, _), trial in trials.items():
        expected = 1.0 if agent == "oracle" else 0.0
        assert trial.status == Status.COMPLETE, (trial.problems, trial.errors)
        assert trial.reward == expected and trial.rewards == {"reward": expected}
        # Harbor's own reward file says the same as its result.json.
        assert trial.file_rewards == {"reward": expected} and trial.rewards_agree is True
        assert trial.phases["verifier"].seconds > 0
    # What the compose-based test asserted, through Harbor's own result model.
    oracle = trials[("oracle", "claude-code")]
    result = TrialResult.model_validate_json((oracle.folder / "result.json").read_text())
    assert result.verifier_result.rewards == {"reward": 1.0}
    assert result.config.environment.import_path == ENVIRONMENT
    # The verifier ran in its own container of the task's image, started by Harbor through us.
    assert result.verifier_environment_mode == "separate"


def test_every_trial_links_to_the_kept_task_it_ran(runs, kept):
    digests = {task_digest(path): fmt for fmt, path in kept.items()}
    for (_, fmt), trial in by_task(runs, kept).items():
        assert digests[trial.task_digest] == fmt
        assert Path(trial.task_path) == kept[fmt]
        assert trial.ingest is not None and trial.ingest.task == trial.task_name


def test_the_oracle_logs_solve_sh_and_its_trajectory_and_the_nop_leaves_no_agent_files(runs, kept):
    trials = by_task(runs, kept)
    for fmt in SAMPLES:
        oracle, nop = trials[("oracle", fmt)], trials[("nop", fmt)]
        assert [p.name for p in oracle.agent_logs] == ["oracle.txt"]
        assert [p.name for p in oracle.trajectories] == ["trajectory.json"]
        assert oracle.agent.version == "1.0.0" and oracle.agent.model is None
        assert nop.agent_logs == nop.trajectories == nop.sessions == ()


def test_the_collected_app_is_the_agents_project(runs, kept):
    trials = by_task(runs, kept)
    for fmt in SAMPLES:
        spec = read_task(kept[fmt])
        nop_app, oracle_app = trials[("nop", fmt)].app_dir, trials[("oracle", fmt)].app_dir
        for rel, entry in spec.start_files.items():
            assert (nop_app / rel).read_bytes() == entry.data, rel
        changed = [
            r for r, e in spec.start_files.items() if (oracle_app / r).read_bytes() != e.data
        ]
        assert changed, "the oracle's solve.sh changed nothing?"
        assert (oracle_app / ".git" / "HEAD").is_file()  # the whole /app crossed


def test_regrading_the_collected_app_gives_1_and_0_and_agrees_with_harbor(engine, runs, kept):
    run_id = new_run_id("regrade")
    trials = by_task(runs, kept)
    for fmt in SAMPLES:
        grader = TaskGrader.prepare(kept[fmt], engine=engine, run_id=run_id)
        assert grader.problem is None
        for agent, expected in (("oracle", 1.0), ("nop", 0.0)):
            trial = trials[(agent, fmt)]
            graded = grader.grade(trial.app_dir, harbor_reward=trial.reward)
            assert graded.status is TrialStatus.GRADED, graded.evidence
            assert graded.reward == expected, (graded.evidence, graded.logs)
            assert graded.agrees is True
            assert graded.evidence["grading"] == "structured"
            assert graded.evidence["submission"]["files"] >= len(read_task(kept[fmt]).start_files)
    assert left_behind(engine, run_id) == []


def test_regrading_without_a_collected_app_is_ungraded_not_zero(engine, kept, tmp_path):
    grader = TaskGrader.prepare(kept["claude-code"], engine=engine, run_id=new_run_id("none"))
    missing = grader.grade(tmp_path / "nothing", harbor_reward=0.0)
    assert (missing.status, missing.reward, missing.agrees) == (TrialStatus.UNGRADED, None, None)


def test_harbor_runs_leave_no_container(engine, runs):
    assert left_behind(engine, runs["run_id"]) == []


def test_a_task_asking_for_network_fails_its_trial_with_the_reason_and_no_container(
    engine, kept, tmp_path
):
    task = tmp_path / "tasks" / "online"
    task.parent.mkdir()
    subprocess.run(["cp", "-a", str(kept["claude-code"]), str(task)], check=True)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('"no-network"', '"public"'))
    run_id = new_run_id("online")
    done = harbor_run(task, "nop", tmp_path / "jobs", run_id)
    assert done.returncode == 0, done.stderr[-3000:]
    (trial,) = read_jobs(tmp_path / "jobs")
    assert trial.status == Status.FAILED and trial.reward is None
    (error,) = trial.errors
    assert error.type == "ValueError" and "without network" in error.message
    assert left_behind(engine, run_id) == []


# -- the environment itself, as Harbor's trial drives it ------------------------------------------


def environment(task_dir: Path, trial_dir: Path, run_id: str) -> OfflineDockerEnvironment:
    task = Task(task_dir)
    return OfflineDockerEnvironment(
        environment_dir=task.paths.environment_dir,
        environment_name=task.short_name,
        session_id=f"{trial_dir.name}__env",
        trial_paths=TrialPaths(trial_dir),
        task_env_config=task.config.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
        auto_mounts=[{"type": "bind", "source": str(trial_dir / "agent"), "target": "/logs/agent"}],
        run_id=run_id,
    )


def test_a_command_past_its_time_limit_fails_and_the_container_lives_on(engine, kept, tmp_path):
    run_id = new_run_id("timeout")
    env = environment(kept["claude-code"], tmp_path / "t__1", run_id)

    async def scenario() -> list[str]:
        await env.start(force_build=False)
        try:
            with pytest.raises(RuntimeError, match="timed out after 2 seconds"):
                await env.exec("sleep 60", timeout_sec=2)
            alive = await env.exec("id -un; pwd; ls -ld /logs/agent", timeout_sec=30)
            default = await env.exec("id -un")  # no user given: the image's USER
            root = await env.exec("id -un", user="root")
            return [alive.stdout, default.stdout, root.stdout]
        finally:
            await env.stop(delete=True)

    alive, default, root = run_coroutine(scenario())
    assert alive.splitlines()[:2] == ["agent", "/app"] and "drwxrwxrwx" in alive
    assert (default.strip(), root.strip()) == ("agent", "root")
    assert left_behind(engine, run_id) == []


def test_files_cross_in_root_owned_and_out_as_regular_files_only(engine, kept, tmp_path):
    run_id = new_run_id("files")
    env = environment(kept["codex"], tmp_path / "t__2", run_id)
    upload = tmp_path / "upload"
    (upload / "bin").mkdir(parents=True)
    (upload / "bin" / "go.sh").write_text("#!/bin/sh\necho went\n")
    (upload / "bin" / "go.sh").chmod(0o755)
    (upload / "link").symlink_to("/etc/passwd")

    async def scenario() -> tuple[str, str]:
        await env.start(force_build=False)
        try:
            await env.upload_dir(upload, "/opt/up")
            ran = await env.exec("/opt/up/bin/go.sh && stat -c %U /opt/up/bin/go.sh")
            await env.exec("ln -s /etc/shadow /app/leak && mkdir -p /app/d && echo x > /app/d/f")
            await env.download_dir("/app", tmp_path / "app")
            await env.download_file("/app/d/f", tmp_path / "f")
            with pytest.raises(FileNotFoundError):
                await env.download_file("/app/leak", tmp_path / "leak")
            listed = await env.exec("ls /opt/up")
            return ran.stdout, listed.stdout
        finally:
            await env.stop(delete=True)

    ran, listed = run_coroutine(scenario())
    assert ran.split() == ["went", "root"]
    assert listed.split() == ["bin"]  # the host's symlink did not cross in
    assert (tmp_path / "app" / "d" / "f").read_text() == "x\n"
    assert (tmp_path / "f").read_text() == "x\n"
    assert not (tmp_path / "app" / "leak").exists() and not (tmp_path / "leak").exists()
    assert (tmp_path / "app" / "package.json").is_file()
    assert left_behind(engine, run_id) == []


@pytest.mark.parametrize("after", [0.05, 0.5, 2.0])
def test_a_start_interrupted_at_any_point_leaves_no_container(engine, kept, tmp_path, after):
    run_id = new_run_id("cancel")
    env = environment(kept["claude-code"], tmp_path / "t__3", run_id)

    async def scenario() -> None:
        try:
            await asyncio.wait_for(env.start(force_build=False), after)
        except TimeoutError:
            pass  # Harbor's own start timeout does the same
        await env.stop(delete=True)

    run_coroutine(scenario())
    assert left_behind(engine, run_id) == []
