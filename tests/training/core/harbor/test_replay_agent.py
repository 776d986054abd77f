"""The replay agent as Harbor drives it, on a local folder standing in for the container: the
whole attempt fixes the project, the cut one stops before the fix, and both leave ATIF under
the trial's own session id. (tests/training/test_replay_docker.py runs it through `harbor run`.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest
from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext
from harbor.models.trajectories import Trajectory

from tests.training.core.helpers import Session
from training.core.harbor.replay_agent import ReplayAgent
from training.core.harbor.replay_plan import Attempt, KeptTask, plan_replay
from trajectories.core.replay import replay

from .helpers import run_coroutine

INSTRUCTION = "Make total() return 1."
CHECK = "python3 -c 'import invoice, sys; sys.exit(invoice.total() != 1)'"
BUGGY = "def total():\n    return 0\n"


class LocalEnvironment:
    """Harbor's environment calls the agent makes, on this machine: paths are the host's.
    ``fails``: a command text and what running it raises, as an environment would."""

    def __init__(self, fails: tuple[str, Exception] | None = None) -> None:
        self.fails = fails

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        if self.fails and self.fails[0] in command:
            raise self.fails[1]
        done = subprocess.run(
            ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=False
        )
        return ExecResult(stdout=done.stdout, stderr=done.stderr, return_code=done.returncode)

    async def upload_file(self, source_path, target_path):
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_path, target_path)

    async def download_file(self, source_path, target_path):
        shutil.copyfile(source_path, target_path)

    def is_path_mounted(self, container_path, host_path):
        return False


def attempt_session(*, read_first: bool = True) -> Session:
    s = Session()
    s.run(CHECK, output="", exit_code=1)
    if read_first:
        s.read("invoice.py", BUGGY)
    s.edit("invoice.py", "return 0", "return 1")
    s.run(CHECK, output="")
    return s


@pytest.fixture
def trial(tmp_path):
    """A project at its task's start, and a function running the agent on it."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "invoice.py").write_text(BUGGY)

    def run(session: Session, cut: str, instruction: str = INSTRUCTION, env=None) -> dict:
        atif, side = session.builder.build()
        result = replay(atif, side, root=session.root, blobs=session.blobs)
        attempt = Attempt(0, len(result.commands) - 1, ("invoice.py",), str(project), key="k")
        task = KeptTask("traj2env/repair-1", INSTRUCTION, "ab" * 32, key="k")
        script = plan_replay(result, atif, attempt=attempt, task=task, blobs=session.blobs)
        path = tmp_path / "repair-1.replay.json"
        path.write_text(script.to_json())
        logs = tmp_path / "logs" / cut
        agent = ReplayAgent(
            logs_dir=tmp_path / "host-agent" / cut,
            script=str(path),
            cut=cut,
            environment_logs_dir=PurePosixPath(logs),
        )
        agent.session_id = f"repair-1__{cut}__agent"
        context = AgentContext()
        try:
            run_coroutine(agent.run(instruction, env or LocalEnvironment(), context))
        finally:
            saved = logs / "trajectory.json"
            atif = json.loads(saved.read_text()) if saved.exists() else None
        return {"atif": atif, "context": context}

    return project, run


def calls(atif: dict) -> list[tuple[str, int | None]]:
    return [
        (
            s["tool_calls"][0]["function_name"],
            (s["observation"]["results"][0].get("extra") or {}).get("exit_code"),
        )
        for s in atif["steps"]
        if s.get("tool_calls")
    ]


def test_the_whole_attempt_fixes_the_project_and_records_what_it_did(trial):
    project, run = trial
    done = run(attempt_session(), "whole")
    assert (project / "invoice.py").read_text() == BUGGY.replace("0", "1")
    atif = done["atif"]
    Trajectory.model_validate(atif)  # Harbor's own strict models
    assert calls(atif) == [("Bash", 1), ("Read", None), ("Write", None), ("Bash", 0)]
    assert atif["session_id"] == "repair-1__whole__agent", "the trial's own session id"
    assert atif["steps"][0]["message"] == INSTRUCTION
    assert done["context"].metadata["replay"]["actions"] == 4


def test_the_attempt_cut_before_its_fix_leaves_the_project_failing(trial):
    project, run = trial
    done = run(attempt_session(), "before_fix")
    assert (project / "invoice.py").read_text() == BUGGY
    assert calls(done["atif"]) == [("Bash", 1), ("Read", None)]
    assert (
        "Stopped where the recorded session began its fix" in done["atif"]["steps"][-1]["message"]
    )


def test_an_edit_the_replay_could_not_resolve_is_applied_as_recorded(trial):
    project, run = trial
    done = run(attempt_session(read_first=False), "whole")
    assert (project / "invoice.py").read_text() == BUGGY.replace("0", "1")
    assert [c for c, _ in calls(done["atif"])] == ["Bash", "Edit", "Bash"]


def test_a_command_past_its_time_limit_is_recorded_as_such_and_the_replay_goes_on(trial):
    project, run = trial
    limit = RuntimeError("Command timed out after 600 seconds")
    done = run(attempt_session(), "whole", env=LocalEnvironment(fails=("sys.exit", limit)))
    assert calls(done["atif"]) == [
        ("Bash", 124), ("Read", None), ("Write", None), ("Bash", 124),
    ]  # fmt: skip
    assert (project / "invoice.py").read_text() == BUGGY.replace("0", "1")


def test_an_environment_that_fails_ends_the_trial_with_what_was_done_saved(trial, tmp_path):
    project, run = trial
    broken = LocalEnvironment(fails=("cat --", RuntimeError("the container is gone")))
    with pytest.raises(RuntimeError, match="the container is gone"):
        run(attempt_session(), "whole", env=broken)
    saved = json.loads((tmp_path / "logs" / "whole" / "trajectory.json").read_text())
    assert calls(saved) == [("Bash", 1)], "the check that ran before the failure"


def test_a_script_for_another_task_is_never_run(trial):
    project, run = trial
    with pytest.raises(ValueError, match="no replay script .* was written for this task"):
        run(attempt_session(), "whole", instruction="Fix the parser.")
    assert (project / "invoice.py").read_text() == BUGGY


def test_a_missing_script_is_refused_before_any_trial(tmp_path):
    with pytest.raises(ValueError, match="no such replay script"):
        ReplayAgent.preflight({"script": str(tmp_path / "none.json")})
    with pytest.raises(ValueError, match="cut"):
        ReplayAgent.preflight({"script": str(tmp_path), "cut": "halfway"})
