"""The one trial loop: the agent phase, the verifier call, the decision and the pool, for any task.

    task = MinedTrial(prepared, baseline)            # or training's AuthoredTrial(spec, image)
    trial = run_trial(task, role=Role.ORACLE, engine=engine, run_id=run_id)
    ran = run_trials(task, controls=CATALOGUE, engine=engine, run_id=run_id)
    ran.status, ran.reasons, ran.trials              # kept / rejected / ungraded, and why

Every trial is two containers of the task's image, one after the other: the agent's (the oracle's
solve.sh, nothing for the no-op, or a control's tampering), stopped and its project copied out
entry by entry (``verifier.take_submission``), then the separate verifier's, which is the task's
``grade``. Docker failing under a trial makes it *ungraded* (reward None), never 0 or 1. What a
kind of task does differently is its ``TrialTask``: how its agent's container starts, how its
oracle solves, how its verifier scores, which controls apply. Mined tasks are ``trial.MinedTrial``
(our grader kit), user-written ones ``training.core.authored`` (their own tests/test.sh).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from groundwork.core.docker import Engine, InfraError
from groundwork.core.docker import docker_labels as lbl
from groundwork.core.docker.engine import Sandbox

from .controls import Control, ControlContext
from .model import ORACLE_REWARD, MatrixStatus, Role, TrialRecord, TrialStatus, trim
from .ungraded import trial_reason
from .verifier import Submission, list_entries, take_submission

# Trials of one matrix run this many at a time (two containers each, one after the other).
TRIAL_JOBS = 2


class Cancelled(Exception):
    """A matrix stopped between trials (the caller was interrupted)."""


class TaskUnusable(Exception):
    """The task cannot be tried here at all (dropped, invalid, images missing); says why."""


@dataclass(frozen=True, slots=True)
class Scored:
    """What a task's verifier made of one submission."""

    reward: float | None  # None: the verifier gave no reward (``problem`` says why)
    logs: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)
    problem: str | None = None


class TrialTask(Protocol):
    """What differs between kinds of task; the loop below does the rest."""

    @property
    def name(self) -> str: ...

    @property
    def project_dir(self) -> str: ...

    @property
    def context(self) -> ControlContext: ...

    @property
    def control_seconds(self) -> float | None: ...  # None: the container's own limit

    def agent_box(self, engine: Engine, run_id: str) -> AbstractContextManager[Sandbox]:
        """A fresh container of the task's image for the agent, ready for it to act."""
        ...

    def solve(self, box: Sandbox, logs: list[str], detail: dict[str, Any]) -> None:
        """The oracle's turn: the task's own solution, as Harbor's oracle agent runs it."""
        ...

    def after_act(
        self, box: Sandbox, control: Control | None, logs: list[str], detail: dict[str, Any]
    ) -> bool:
        """Evidence gathered in the live container after the agent acted; True when it may
        have changed the project (which is then listed again)."""
        ...

    def grade(self, engine: Engine, submission: Submission, *, run_id: str) -> Scored:
        """The separate verifier on ``submission``. InfraError: ungraded."""
        ...

    def skip_reason(self, control: Control) -> str | None: ...


class TaskSource(Protocol):
    """Where a kind of task comes from: its folder made ready to try (``trial.mined_task``,
    ``training.core.authored.authored_task``). TaskUnusable when it cannot be; InfraError when
    Docker fails."""

    def __call__(self, task_dir: Path, *, engine: Engine, run_id: str) -> TrialTask: ...


@dataclass(frozen=True, slots=True)
class MatrixRun:
    """The trials of one matrix, in plan order, and the decision on them."""

    status: MatrixStatus
    trials: tuple[TrialRecord, ...]
    reasons: tuple[str, ...]


def act(
    box: Sandbox,
    task: TrialTask,
    *,
    role: Role,
    control: Control | None,
    logs: list[str],
    detail: dict[str, Any],
) -> None:
    """What the agent does in its container: solve.sh, nothing (no-op), or a control's tampering."""
    if role is Role.ORACLE:
        task.solve(box, logs, detail)
    elif control is not None:
        if control.root_setup:
            setup = box.exec(["sh", "-c", control.root_setup], user="root", timeout=60)
            if not setup.ok:
                raise InfraError(f"control {control.name}: setup failed: {setup.stderr}")
        if control.files:
            box.put_files(task.project_dir, dict(control.files))
        acted = box.exec(
            ["sh", "-c", control.shell],
            workdir=task.project_dir,
            env=task.context.env(),
            timeout=task.control_seconds,
        )
        logs.append(f"-- {control.name} (exit {acted.exit_code})\n{acted.stdout}{acted.stderr}")
        detail["control_exit_code"] = acted.exit_code


def agent_phase(
    engine: Engine,
    task: TrialTask,
    *,
    role: Role,
    control: Control | None,
    run_id: str,
    logs: list[str],
    detail: dict[str, Any],
) -> Submission:
    """The agent acts on the starting files; its stopped container's project is the submission."""
    with task.agent_box(engine, run_id) as box:
        act(box, task, role=role, control=control, logs=logs, detail=detail)
        names = list_entries(box, task.project_dir) if box.alive else []
        if not box.alive:
            # Killed at its time limit: an agent that runs out of time delivers nothing.
            detail["agent_timed_out"] = True
        elif task.after_act(box, control, logs, detail) and box.alive:
            names = list_entries(box, task.project_dir)
        if box.alive:
            box.stop()  # nothing it started may change the files while they are copied
        return take_submission(box, task.project_dir, names)


def run_trial(
    task: TrialTask,
    *,
    role: Role,
    repeat: int = 0,
    control: Control | None = None,
    engine: Engine,
    run_id: str,
) -> TrialRecord:
    """One trial: the agent's container, then the separate verifier's. Never raises InfraError."""
    expected = ORACLE_REWARD if role is Role.ORACLE else 0.0
    started_at, started = datetime.now(UTC), time.monotonic()
    detail: dict[str, Any] = {}
    logs: list[str] = []
    reward: float | None = None
    status = TrialStatus.GRADED
    try:
        submission = agent_phase(
            engine, task, role=role, control=control, run_id=run_id, logs=logs, detail=detail
        )
        detail["agent_seconds"] = round(time.monotonic() - started, 3)
        if submission.problem:
            # The agent's doing (a project too large to take): graded 0.
            reward, detail["reasons"] = 0.0, [submission.problem]
        else:
            scored = task.grade(engine, submission, run_id=run_id)
            reward = scored.reward
            detail.update(scored.detail)
            logs.append(f"-- verifier\n{scored.logs}")
    except InfraError as exc:
        reward, status = None, TrialStatus.UNGRADED
        detail["infra_error"] = exc.message
        logs.append(f"-- infrastructure error: {exc.message}\n{exc.log}")
    return TrialRecord(
        role=role,
        name=control.name if control is not None else str(role),
        repeat=repeat,
        reward=reward,
        expected=expected,
        status=status,
        started=started_at,
        finished=datetime.now(UTC),
        seconds=time.monotonic() - started,
        logs=trim("\n".join(logs)),
        detail=detail,
    )


def skipped(control: Control, reason: str) -> TrialRecord:
    now = datetime.now(UTC)
    return TrialRecord(
        role=Role.CONTROL,
        name=control.name,
        repeat=0,
        reward=None,
        expected=0.0,
        status=TrialStatus.SKIPPED,
        started=now,
        finished=now,
        seconds=0.0,
        detail={"skip_reason": reason},
    )


def decide(trials: Sequence[TrialRecord]) -> tuple[MatrixStatus, tuple[str, ...]]:
    """Kept only if every oracle repeat is 1.0, the no-op 0 and every control 0.

    A graded trial off its expected reward rejects the task whatever else happened;
    otherwise any ungraded trial leaves it ungraded (to retry).
    """
    reasons = []
    for trial in trials:
        if trial.status is TrialStatus.GRADED and trial.reward != trial.expected:
            why = "; ".join(trial.detail.get("reasons") or []) or "no reason recorded"
            label = f"{trial.name} #{trial.repeat}" if trial.role is Role.ORACLE else trial.name
            reasons.append(f"{label} scored {trial.reward} (must be {trial.expected}): {why}")
    if not any(t.role is Role.ORACLE for t in trials):
        reasons.append("no oracle trial ran")
    if reasons:
        return MatrixStatus.REJECTED, tuple(reasons)
    ungraded = [t for t in trials if t.status is TrialStatus.UNGRADED]
    if ungraded:
        return MatrixStatus.UNGRADED, tuple(
            trial_reason(t.name, t.repeat, t.detail.get("infra_error", "")) for t in ungraded
        )
    return MatrixStatus.KEPT, ()


def run_trials(
    task: TrialTask,
    *,
    controls: Sequence[Control],
    engine: Engine,
    run_id: str,
    repeats: int = 3,
    cancel: threading.Event | None = None,
    progress: Callable[[TrialRecord], None] | None = None,
    trial_jobs: int = TRIAL_JOBS,
) -> MatrixRun:
    """Oracle x ``repeats``, the no-op and every control, ``trial_jobs`` trials at a time, and
    the decision on them; the trials are listed in that order.

    With ``cancel`` set the trials not started yet raise ``Cancelled`` (the caller removes the
    containers); without it, an interrupt kills this process's containers of the run itself.
    """
    plan: list[tuple[Role, int, Control | None]] = [(Role.ORACLE, i, None) for i in range(repeats)]
    plan.append((Role.NOOP, 0, None))
    plan += [(Role.CONTROL, 0, control) for control in controls]
    stop = cancel or threading.Event()

    def one(item: tuple[Role, int, Control | None]) -> TrialRecord:
        role, repeat, control = item
        if stop.is_set():
            raise Cancelled(f"cancelled before {control.name if control else role} of {task.name}")
        reason = task.skip_reason(control) if control is not None else None
        if control is not None and reason is not None:
            trial = skipped(control, reason)
        else:
            trial = run_trial(
                task, role=role, repeat=repeat, control=control, engine=engine, run_id=run_id
            )
        if progress is not None:
            progress(trial)
        return trial

    # Trials are independent containers: a few at once keep the engine busy while one waits
    # on a container start or a copy (see docs/BENCHMARKS.md).
    try:
        with ThreadPoolExecutor(max_workers=max(1, trial_jobs), thread_name_prefix="trial") as pool:
            try:
                trials = list(pool.map(one, plan))
            except BaseException:
                stop.set()
                if cancel is None:  # run_matrices kills the containers of every matrix itself
                    kill_own_containers(engine, run_id)
                raise
    except BaseException:
        if cancel is None:  # the trials have stopped: remove what their own clean-up left
            kill_own_containers(engine, run_id, remove=True)
        raise
    status, reasons = decide(trials)
    return MatrixRun(status, tuple(trials), reasons)


def kill_own_containers(engine: Engine, run_id: str, *, remove: bool = False) -> None:
    """Kill (or, once the lanes have stopped, remove) this process's containers of the run."""
    mine = lbl.owner_token()
    with contextlib.suppress(InfraError):
        for container in engine.containers(label=f"{lbl.RUN}={run_id}"):
            if container.labels.get(lbl.OWNER) == mine:
                with contextlib.suppress(Exception):
                    if remove:
                        engine.api.remove_container(container.id, force=True)
                    else:
                        engine.api.kill(container.id)
