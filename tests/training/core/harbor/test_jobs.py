"""Reading harbor run jobs folders: finished, failed, unfinished and broken trials, and the
real trial folders of two Harbor forks in the corpus."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from harbor.models.agent.context import AgentContext
from harbor.models.task.id import LocalTaskId
from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig
from harbor.models.trial.result import (
    AgentInfo,
    ExceptionInfo,
    ModelInfo,
    StepResult,
    TimingInfo,
    TrialResult,
)
from harbor.models.verifier.result import VerifierResult

from training.core.harbor.jobs import SERVED_KEY, Status, read_jobs, read_trial

STARTED = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def trial_config(name: str, *, task: str = "/tasks/repair-1") -> TrialConfig:
    return TrialConfig(
        task=TaskConfig(path=Path(task)),
        trial_name=name,
        agent=AgentConfig(
            name="terminus-2", model_name="openai/gpt-x", kwargs={"prompt_version": "v3"}
        ),
    )


def write_trial(
    folder: Path,
    *,
    reward: float | None = 1.0,
    files: dict[str, str] | None = None,
    exception: str | None = None,
    result: bool = True,
    steps: tuple[str, ...] = (),
    metadata: dict | None = None,
) -> Path:
    """A trial folder laid out as Harbor writes one, its JSON through Harbor's own models."""
    folder.mkdir(parents=True)
    config = trial_config(folder.name)
    (folder / "config.json").write_text(config.model_dump_json(indent=4))
    if result:
        document = TrialResult(
            task_name="traj2env/repair-1",
            trial_name=folder.name,
            trial_uri=folder.as_uri(),
            task_id=LocalTaskId(path=Path("/tasks/repair-1")),
            task_checksum="c" * 64,
            config=config,
            agent_info=AgentInfo(
                name="terminus-2", version="2.0.0", model_info=ModelInfo(name="gpt-x")
            ),
            verifier_result=None if reward is None else VerifierResult(rewards={"reward": reward}),
            agent_result=None if metadata is None else AgentContext(metadata=metadata),
            exception_info=None
            if exception is None
            else ExceptionInfo(
                exception_type=exception,
                exception_message="the agent ran out of time",
                exception_traceback="Traceback ...",
                occurred_at=STARTED,
            ),
            step_results=[StepResult(step_name=name) for name in steps] or None,
            started_at=STARTED,
            finished_at=STARTED + timedelta(seconds=90),
            agent_execution=TimingInfo(
                started_at=STARTED + timedelta(seconds=5),
                finished_at=STARTED + timedelta(seconds=65),
            ),
        )
        (folder / "result.json").write_text(document.model_dump_json(indent=4))
    for rel, text in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


COLLECTED = {
    "artifacts/manifest.json": json.dumps(
        [
            {
                "source": "/app",
                "destination": "artifacts/app",
                "type": "directory",
                "status": "ok",
                "service": None,
                "exclude": [],
            }
        ]
    ),
    "artifacts/app/calc/ops.py": "def mul(a, b):\n    return a * b\n",
}


def test_a_finished_trial_gives_task_agent_rewards_timings_files_and_the_collected_app(tmp_path):
    folder = write_trial(
        tmp_path / "job" / "repair-1__Ab3dE",
        files={
            "verifier/reward.txt": "1\n",
            "agent/trajectory.json": "{}",
            "agent/sessions/projects/-app/s1.jsonl": "{}\n",
            "agent/terminus.txt": "log",
            "lock.json": json.dumps({"task": {"digest": "sha256:" + "d" * 64}}),
            **COLLECTED,
        },
    )
    (trial,) = read_jobs(tmp_path)
    assert trial.folder == folder and trial.trial_name == "repair-1__Ab3dE"
    assert trial.task_name == "traj2env/repair-1" and trial.task_path == "/tasks/repair-1"
    assert trial.task_digest == "sha256:" + "d" * 64 and trial.task_checksum == "c" * 64
    assert (trial.agent.name, trial.agent.version, trial.agent.model) == (
        "terminus-2",
        "2.0.0",
        "gpt-x",
    )
    assert trial.agent.kwargs == {"prompt_version": "v3"}
    assert trial.reward == 1.0 and trial.rewards == {"reward": 1.0}
    assert trial.file_rewards == {"reward": 1.0} and trial.rewards_agree is True
    assert trial.phases["agent_execution"].seconds == 60.0
    assert trial.finished_at - trial.started_at == timedelta(seconds=90)
    assert trial.trajectories == (folder / "agent" / "trajectory.json",)
    assert [p.name for p in trial.sessions] == ["s1.jsonl"]
    assert [p.name for p in trial.agent_logs] == ["terminus.txt"]
    assert trial.app_dir == folder / "artifacts" / "app"
    assert (trial.app_dir / "calc" / "ops.py").is_file()
    assert trial.status == Status.COMPLETE and trial.problems == ()
    assert trial.ingest is not None and trial.ingest.task == trial.task_name


def test_the_adapter_digest_serving_recorded_is_read_from_the_agents_metadata(tmp_path):
    digest = "e" * 64
    write_trial(tmp_path / "served" / "repair-1__served", metadata={SERVED_KEY: digest})
    write_trial(tmp_path / "claimed" / "repair-1__claimed")  # `--ak adapter=` alone
    write_trial(tmp_path / "forged" / "repair-1__forged", metadata={SERVED_KEY: "lora-v1.0"})
    served, claimed, forged = (read_jobs(tmp_path / n)[0] for n in ("served", "claimed", "forged"))
    assert served.agent.served_sha256 == digest
    assert claimed.agent.served_sha256 is None and forged.agent.served_sha256 is None


def test_only_trial_folders_are_read_and_nothing_inside_a_trial_is_searched(tmp_path):
    job = tmp_path / "jobs" / "2026-11-30__12-00-00"
    job.mkdir(parents=True)
    (job / "config.json").write_text(json.dumps({"job_name": "x", "n_attempts": 1}))
    (job / "result.json").write_text(json.dumps({"n_total_trials": 2, "stats": {}}))
    write_trial(job / "b__2", reward=0.0, files={"verifier/reward.txt": "0", **COLLECTED})
    first = write_trial(job / "a__1", files={"verifier/reward.txt": "1", **COLLECTED})
    # An agent can leave anything in /app, a trial folder look-alike too.
    write_trial(first / "artifacts" / "app" / "jobs" / "fake__9")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "result.json").write_text("{}")
    trials = read_jobs(tmp_path / "jobs")
    assert [t.trial_name for t in trials] == ["a__1", "b__2"]
    assert [t.reward for t in trials] == [1.0, 0.0]


def test_a_trial_that_never_finished_is_partial_with_what_its_config_says(tmp_path):
    folder = write_trial(tmp_path / "repair-1__x", result=False, files={"agent/setup.log": ""})
    trial = read_trial(folder)
    assert trial.status == Status.PARTIAL
    assert trial.problems[0] == "no result.json: the trial did not finish"
    assert trial.trial_name == "repair-1__x" and trial.task_name == "repair-1"
    assert (trial.agent.name, trial.agent.model) == ("terminus-2", "openai/gpt-x")
    assert trial.reward is None and trial.app_dir is None and trial.finished_at is None


def test_a_failed_trial_keeps_the_exception_harbor_recorded(tmp_path):
    folder = write_trial(tmp_path / "t__1", reward=None, exception="AgentTimeoutError")
    trial = read_trial(folder)
    assert trial.status == Status.FAILED
    (error,) = trial.errors
    assert (error.type, error.message, error.step) == (
        "AgentTimeoutError",
        "the agent ran out of time",
        None,
    )
    assert trial.reward is None


def test_broken_files_are_recorded_as_problems_never_raised(tmp_path):
    folder = tmp_path / "t__2"
    (folder / "verifier").mkdir(parents=True)
    (folder / "result.json").write_text('{"trial_name": "t__2", "truncated')
    (folder / "verifier" / "reward.txt").write_text("0\n")
    (folder / "artifacts").mkdir()
    (folder / "artifacts" / "manifest.json").write_text("[{]")
    (trial,) = read_jobs(tmp_path)  # recognised by its outputs, as the ingest does
    assert trial.trial_name == "t__2"
    assert any(p.startswith("result.json unreadable") for p in trial.problems)
    assert trial.reward == 0.0 and trial.file_rewards == {"reward": 0.0}
    assert trial.status == Status.PARTIAL  # no result: it never said it finished


def test_reward_files_that_are_not_numbers_are_problems(tmp_path):
    folder = write_trial(tmp_path / "t__3", files={"verifier/reward.txt": "passed\n"})
    trial = read_trial(folder)
    assert trial.file_rewards == {} and trial.rewards_agree is None
    assert "verifier/reward.txt is not a number: 'passed'" in trial.problems


def test_reward_json_is_read_before_reward_txt_and_a_disagreement_shows(tmp_path):
    folder = write_trial(
        tmp_path / "t__4",
        reward=1.0,
        files={
            "verifier/reward.json": json.dumps({"reward": 0, "tests": 0.5}),
            "verifier/reward.txt": "1",
        },
    )
    trial = read_trial(folder)
    assert trial.file_rewards == {"reward": 0.0, "tests": 0.5}
    assert trial.rewards_agree is False and trial.reward == 1.0  # result.json's, as ingested


def test_a_multi_step_trials_reward_files_come_from_its_last_step_in_harbors_order(tmp_path):
    folder = write_trial(
        tmp_path / "t__5",
        steps=("write", "check"),  # run in this order; "check" sorts first by name
        files={"steps/write/verifier/reward.txt": "0", "steps/check/verifier/reward.txt": "1"},
    )
    assert read_trial(folder).file_rewards == {"reward": 1.0}


# -- the corpus: trial folders written by two Harbor forks ---------------------------------------


@pytest.mark.corpus
def test_evolving_skills_claude_code_trials_are_read_whole(corpus):
    trials = read_jobs(corpus / "evolving-skills")
    assert len(trials) == 5
    for trial in trials:
        assert trial.status == Status.COMPLETE, trial.problems
        assert trial.agent.name == "claude-code" and trial.agent.version == "2.1.104"
        assert trial.agent.model in {"qwen3.5-27b", "MiniMax-M2.7"}
        assert trial.reward in (0.0, 1.0) and trial.rewards_agree is True
        assert trial.trajectories[0] == trial.folder / "agent" / "trajectory.json"
        assert trial.sessions and all(p.suffix == ".jsonl" for p in trial.sessions)
        assert trial.task_checksum and trial.task_name and trial.task_path
        assert trial.phases["agent_execution"].seconds > 0
        # These tasks declared no artifacts: nothing to re-grade, and the reader says so.
        assert trial.app_dir is None and "no collected /app" in trial.problems[0]
    assert sorted(t.reward for t in trials) == [0.0, 0.0, 1.0, 1.0, 1.0]
    subagent = [p for t in trials for p in t.sessions if "subagents" in p.parts]
    assert len(subagent) == 1


@pytest.mark.corpus
def test_openclaw_multi_step_trials_take_their_rewards_from_the_step_verifier(corpus):
    trials = read_jobs(corpus / "openclaw-harbor-15735640198")
    assert [t.task_name for t in trials] == [
        "clawbench/t3-data-pipeline-report",
        "clawbench/t4-browser-research-and-code",
    ]
    for trial in trials:
        assert (trial.agent.name, trial.agent.model, trial.agent.provider) == (
            "openclaw",
            "kimi-k2.6",
            "anthropic",
        )
        assert trial.rewards_agree is True and trial.rewards == trial.file_rewards
        assert len(trial.rewards) == 10
        assert trial.folder / "steps" / "run" / "agent" / "trajectory.json" in trial.trajectories
        assert [p.parent.name for p in trial.sessions] == ["openclaw-sessions"]
    assert [t.reward for t in trials] == [0.4075, 0.7524]


# -- a jobs folder that points elsewhere ---------------------------------------------------------


def test_a_collected_app_symlinked_out_of_the_jobs_folder_is_refused_with_the_reason(tmp_path):
    host = tmp_path / "host"
    (host / "src").mkdir(parents=True)
    (host / "src" / "secret.py").write_text("TOKEN = 'x'\n")
    folder = write_trial(tmp_path / "jobs" / "job" / "repair-1__a")
    (folder / "artifacts").mkdir()
    (folder / "artifacts" / "app").symlink_to(host)
    (trial,) = read_jobs(tmp_path / "jobs")
    assert trial.app_dir is None
    assert "artifacts/app is a symlink that leaves the jobs folder: refused" in trial.problems


def test_files_symlinked_out_of_the_jobs_folder_are_never_read(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "reward.txt").write_text("1\n")
    (outside / "s.jsonl").write_text("{}\n")
    folder = write_trial(tmp_path / "jobs" / "repair-1__b", reward=None)
    (folder / "verifier").mkdir()
    (folder / "verifier" / "reward.txt").symlink_to(outside / "reward.txt")
    (folder / "agent").symlink_to(outside)
    (trial,) = read_jobs(tmp_path / "jobs")
    assert trial.file_rewards == {} and trial.reward is None and trial.sessions == ()
    assert "verifier/reward.txt is a symlink that leaves the jobs folder: refused" in (
        trial.problems
    )
    assert "agent is a symlink that leaves the jobs folder: refused" in trial.problems


def test_a_fifo_in_a_trial_folder_is_skipped_with_the_reason_and_never_opened(tmp_path):
    import os
    import threading

    folder = write_trial(tmp_path / "jobs" / "repair-1__c", reward=None)
    (folder / "verifier").mkdir()
    fifo = folder / "verifier" / "reward.txt"
    os.mkfifo(fifo)
    found: list = []
    reader = threading.Thread(target=lambda: found.extend(read_jobs(tmp_path / "jobs")))
    reader.start()
    reader.join(timeout=20)
    if reader.is_alive():  # release the blocked open so the test run can end, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
        pytest.fail("reading the jobs folder opened the FIFO and blocked")
    (trial,) = found
    assert "verifier/reward.txt is a FIFO, not a file: skipped" in trial.problems
    assert trial.file_rewards == {}
