"""The one trial loop, with a task whose containers and verifier are fakes (no Docker): the plan's
order, skipped controls, the decision, ungraded trials, a timed-out agent, evidence gathered after
the agent acted, and cancelling. Mined and user-written tasks differ only in their ``TrialTask``."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from groundwork.core.docker import ExecResult, Extracted, FileEntry, InfraError
from tasks_review.core.trials import (
    Cancelled,
    Control,
    ControlContext,
    MatrixStatus,
    Role,
    Scored,
    TrialStatus,
    run_trial,
    run_trials,
)
from tasks_review.core.trials.verifier import Submission

PROJECT = "/app"
SOLVED = b"solved\n"


class FakeBox:
    """An agent's container whose project is a dict; ``dies`` kills it when the agent acts."""

    def __init__(self, *, dies: bool = False) -> None:
        self.project: dict[str, bytes] = {"start.txt": b"start\n"}
        self.alive = True
        self.dies = dies
        self.commands: list[str] = []

    def exec(self, cmd: list[str], **_: Any) -> ExecResult:
        self.commands.append(cmd[-1] if isinstance(cmd, list) else cmd)
        if cmd[0] == "/usr/bin/find":
            return ExecResult(0, "\0".join(self.project) + "\0", "", 0.0)
        if "forge" in cmd[-1]:
            self.project["reward.txt"] = b"1\n"
        if self.dies:
            self.alive = False
            return ExecResult(None, "", "", 0.0, timed_out=True)
        return ExecResult(0, "", "", 0.0)

    def put_files(self, folder: str, files: dict[str, FileEntry | bytes], **_: Any) -> None:
        for name, entry in files.items():
            self.project[name] = entry.data if isinstance(entry, FileEntry) else entry

    def stop(self) -> None:
        self.alive = False

    def copy_out(self, path: str, **_: Any) -> Extracted:
        name = path.rsplit("/", 1)[1]
        if name not in self.project:
            raise FileNotFoundError(path)
        return Extracted(files={name: FileEntry(self.project[name])})


@dataclass
class FakeTask:
    """A task whose verifier gives 1 for a solved project or a forged reward file, else 0."""

    skips: dict[str, str] = field(default_factory=dict)
    dies: bool = False
    evidence: bool = False
    boxes: list[FakeBox] = field(default_factory=list)
    name: str = "fake"
    project_dir: str = PROJECT
    control_seconds: float | None = None
    context: ControlContext = ControlContext("sh", frozenset(), PROJECT, PROJECT)

    @contextlib.contextmanager
    def agent_box(self, engine: Any, run_id: str) -> Iterator[Any]:
        box = FakeBox(dies=self.dies)
        self.boxes.append(box)
        yield box

    def solve(self, box: Any, logs: list[str], detail: dict[str, Any]) -> None:
        box.put_files(PROJECT, {"answer.txt": FileEntry(SOLVED)})
        box.exec(["sh", "-c", "solve"])
        detail["solve_exit_code"] = 0

    def after_act(self, box: Any, control: Any, logs: list[str], detail: dict[str, Any]) -> bool:
        if self.evidence and control is not None:
            box.project["naive.txt"] = b"ran\n"
            detail["naive_exit_code"] = 0
            return True
        return False

    def grade(self, engine: Any, submission: Submission, *, run_id: str) -> Scored:
        files = {path: entry.data for path, entry in submission.files.items()}
        if "broken" in files:
            raise InfraError("the daemon went away")
        won = files.get("answer.txt") == SOLVED or "reward.txt" in files
        return Scored(1.0 if won else 0.0, "verified", {"files": sorted(files)})

    def skip_reason(self, control: Control) -> str | None:
        return self.skips.get(control.name)


FORGE = Control("forge", "writes a reward file", shell="forge")
IDLE = Control("idle", "does nothing", shell="true")


def test_the_plan_runs_the_oracle_repeats_then_the_noop_then_each_control_in_order():
    task = FakeTask(skips={"forge": "nothing to forge here"})
    ran = run_trials(task, controls=[FORGE, IDLE], engine=None, run_id="r", repeats=2)
    assert [(t.name, t.repeat, t.status) for t in ran.trials] == [
        ("oracle", 0, TrialStatus.GRADED),
        ("oracle", 1, TrialStatus.GRADED),
        ("noop", 0, TrialStatus.GRADED),
        ("forge", 0, TrialStatus.SKIPPED),
        ("idle", 0, TrialStatus.GRADED),
    ]
    assert ran.trials[3].detail["skip_reason"] == "nothing to forge here"
    assert [t.reward for t in ran.trials] == [1.0, 1.0, 0.0, None, 0.0]
    assert (ran.status, ran.reasons) == (MatrixStatus.KEPT, ())
    assert ran.trials[0].logs.endswith("-- verifier\nverified")


def test_a_control_that_wins_rejects_the_task_naming_it():
    ran = run_trials(FakeTask(), controls=[FORGE, IDLE], engine=None, run_id="r", repeats=1)
    assert ran.status is MatrixStatus.REJECTED
    assert ran.reasons == ("forge scored 1.0 (must be 0.0): no reason recorded",)


def test_docker_failing_under_the_verifier_leaves_the_trial_ungraded_never_0_or_1():
    files = {"broken": b""}
    breaking = Control("break", "leaves what the verifier cannot grade", shell="true", files=files)
    ran = run_trials(FakeTask(), controls=[breaking], engine=None, run_id="r", repeats=1)
    trial = ran.trials[-1]
    assert (trial.status, trial.reward) == (TrialStatus.UNGRADED, None)
    assert trial.detail["infra_error"] == "the daemon went away"
    assert ran.status is MatrixStatus.UNGRADED and "the daemon went away" in ran.reasons[0]


def test_an_agent_killed_at_its_time_limit_delivers_nothing():
    trial = run_trial(FakeTask(dies=True), role=Role.ORACLE, engine=None, run_id="r")
    assert trial.detail["agent_timed_out"] is True
    assert (trial.reward, trial.detail["files"]) == (0.0, [])


def test_evidence_gathered_after_the_agent_acted_is_in_the_submission():
    task = FakeTask(evidence=True)
    trial = run_trial(task, role=Role.CONTROL, control=IDLE, engine=None, run_id="r")
    assert trial.detail["naive_exit_code"] == 0
    assert trial.detail["files"] == ["naive.txt", "start.txt"]
    assert not task.boxes[0].alive  # stopped before its files were taken


def test_a_cancelled_matrix_starts_no_further_trial():
    cancel = threading.Event()
    cancel.set()
    task = FakeTask()
    with pytest.raises(Cancelled, match="cancelled before oracle of fake"):
        run_trials(task, controls=[IDLE], engine=None, run_id="r", cancel=cancel)
    assert task.boxes == []
