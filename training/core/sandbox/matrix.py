"""A sandbox task's trial matrix: its image built once, then oracle, no-op and controls.

    result = verify_sandbox_task(task_dir, run_id="sandbox-7")      # or, step by step:
    spec = read_sandbox_task(task_dir)
    image = prepare(spec, engine)                                   # built once, by content
    result = run_matrix(spec, image.image_id, engine=engine, run_id="sandbox-7")
    result.status, result.won                                       # kept? which controls won

Every trial is two containers of the task's image, one after the other: the agent's (the
task's own ``solution/solve.sh`` uploaded to ``/solution`` and run as Harbor's oracle agent
runs it, nothing for the no-op, or a control's tampering), stopped and copied out, then the
separate verifier's (``verifier.grade_app``). The task is kept only when the oracle scores
exactly full reward on every repeat and the no-op and every applicable control exactly 0; a
trial Docker failed under is *ungraded*, never 0 or 1 (``tasks_review``'s ``decide`` rules).

Why our own containers and not ``harbor run`` with oracle, nop and tamper agents: one matrix is
a dozen trials, and each ``harbor run`` process costs seconds of start-up before its first
container, plus a trial folder written and read back per trial; here a trial is two containers
on the Docker seam and the matrix's pieces are the mined tasks' own (the submission taken
entry by entry from the stopped container, the ``Control`` runner, ``decide``). Harbor's runner
still runs these tasks through ``training.core.harbor.environment`` for rollouts, and the
verifier follows its separate-verifier contract step by step, so both grade alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from groundwork.core.docker import BuiltImage, Engine, FileEntry, InfraError, Limits
from groundwork.core.docker.engine import Sandbox
from tasks_review.core.trials.controls import Control, ControlContext
from tasks_review.core.trials.matrix import TRIAL_JOBS, decide
from tasks_review.core.trials.model import MatrixStatus, Role, TrialRecord, TrialStatus, trim
from tasks_review.core.trials.trial import skipped
from tasks_review.core.trials.verifier import Submission, list_entries, take_submission

from .controls import CATALOGUE, control_context
from .folder import PATHS, SandboxSpec, SandboxTaskInvalid, read_sandbox_task, unavailable_images
from .verifier import LOG_DIRS, grade_app, image_user

ORACLE_REWARD = 1.0
CONTROL_SECONDS = 120.0
SOLUTION_DIR = str(PATHS.solution_dir)


@dataclass(frozen=True, slots=True)
class SandboxResult:
    task_dir: str
    status: MatrixStatus  # kept, rejected or ungraded
    trials: tuple[TrialRecord, ...] = ()
    reasons: tuple[str, ...] = ()  # why it is not kept, one line each
    problems: tuple[str, ...] = ()  # the folder cannot run here at all (no trial ran)
    image: str | None = None
    build_seconds: float = 0.0
    wall_seconds: float = 0.0

    @property
    def kept(self) -> bool:
        return self.status is MatrixStatus.KEPT

    @property
    def won(self) -> tuple[str, ...]:
        """The controls that scored anything but 0: each a way to the reward without the task."""
        return tuple(
            t.name
            for t in self.trials
            if t.role is Role.CONTROL and t.status is TrialStatus.GRADED and t.reward != 0.0
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_dir": self.task_dir,
            "status": str(self.status),
            "kept": self.kept,
            "reasons": list(self.reasons),
            "problems": list(self.problems),
            "won": list(self.won),
            "image": self.image,
            "build_seconds": round(self.build_seconds, 3),
            "wall_seconds": round(self.wall_seconds, 3),
            "trials": [t.to_dict() for t in self.trials],
        }


def limits_for(spec: SandboxSpec) -> Limits:
    return Limits(
        cpus=spec.cpus,
        memory_bytes=spec.memory_mb << 20,
        pids=512,
        timeout=spec.verifier_seconds,
    )


def prepare(spec: SandboxSpec, engine: Engine) -> BuiltImage:
    """The task's image, built once per content of environment/ (offline). InfraError if not."""
    return engine.build(spec.context, timeout=spec.build_seconds)


# -- the agent's container ------------------------------------------------------------------------


@dataclass(slots=True)
class _Agent:
    submission: Submission
    logs: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


def _act(
    box: Sandbox,
    spec: SandboxSpec,
    *,
    role: Role,
    control: Control | None,
    context: ControlContext,
    user: str,
    agent: _Agent,
) -> None:
    # Harbor gives every agent its log folders, open to any user: a forger can reach them.
    dirs = " ".join(LOG_DIRS)
    box.exec(["sh", "-c", f"mkdir -p {dirs} && chmod 777 {dirs}"], user="root", timeout=60)
    if role is Role.ORACLE:
        # As Harbor's oracle agent: solution/ uploaded as root, solve.sh run as the agent.
        files = {
            rel: FileEntry(e.data, executable=e.executable or rel == "solve.sh")
            for rel, e in spec.solution_files.items()
        }
        box.put_files(SOLUTION_DIR, files, owner=(0, 0))
        acted = box.exec(
            ["bash", "-c", f"{SOLUTION_DIR}/solve.sh"],
            user=user,
            env={"DEBIAN_FRONTEND": "noninteractive", **spec.solution_env},
            timeout=spec.agent_seconds,
        )
        agent.logs.append(f"-- solve.sh (exit {acted.exit_code})\n{acted.stdout}{acted.stderr}")
        agent.detail["solve_exit_code"] = acted.exit_code
    elif control is not None:
        if control.root_setup:
            setup = box.exec(["sh", "-c", control.root_setup], user="root", timeout=60)
            if not setup.ok:
                raise InfraError(f"control {control.name}: setup failed: {setup.stderr}")
        if control.files:
            box.put_files(spec.project_dir, dict(control.files))
        acted = box.exec(
            ["sh", "-c", control.shell],
            user=user,
            workdir=spec.project_dir,
            env=context.env(),
            timeout=CONTROL_SECONDS,
        )
        output = f"{acted.stdout}{acted.stderr}"
        agent.logs.append(f"-- {control.name} (exit {acted.exit_code})\n{output}")
        agent.detail["control_exit_code"] = acted.exit_code


def agent_phase(
    engine: Engine,
    spec: SandboxSpec,
    image: str,
    *,
    role: Role,
    control: Control | None,
    context: ControlContext,
    run_id: str,
) -> _Agent:
    """The agent acts on the starting files; its stopped container's project is the submission."""
    user = spec.agent_user or image_user(engine, image)
    agent = _Agent(Submission())
    limits = limits_for(spec)
    with engine.sandbox(
        image, run_id=run_id, user=user, limits=limits, workdir=spec.workdir, env=spec.env or None
    ) as box:
        _act(box, spec, role=role, control=control, context=context, user=user, agent=agent)
        names = list_entries(box, spec.project_dir) if box.alive else []
        if not box.alive:
            # Killed at its time limit: an agent that runs out of time delivers nothing.
            agent.detail["agent_timed_out"] = True
        else:
            box.stop()  # nothing it started may change the files while they are copied
        agent.submission = take_submission(box, spec.project_dir, names)
    return agent


# -- trials and the matrix ------------------------------------------------------------------------


def run_trial(
    engine: Engine,
    spec: SandboxSpec,
    image: str,
    *,
    role: Role,
    repeat: int = 0,
    control: Control | None = None,
    run_id: str,
) -> TrialRecord:
    """One trial: the agent's container, then the verifier's. Never raises InfraError."""
    expected = ORACLE_REWARD if role is Role.ORACLE else 0.0
    started_at, started = datetime.now(UTC), time.monotonic()
    detail: dict[str, Any] = {}
    logs: list[str] = []
    reward: float | None = None
    status = TrialStatus.GRADED
    try:
        agent = agent_phase(
            engine,
            spec,
            image,
            role=role,
            control=control,
            context=control_context(spec),
            run_id=run_id,
        )
        logs += agent.logs
        detail.update(agent.detail, agent_seconds=round(time.monotonic() - started, 3))
        if agent.submission.problem:
            # The agent's doing (a project too large to take): graded 0, as for mined tasks.
            reward, detail["reasons"] = 0.0, [agent.submission.problem]
        else:
            graded = grade_app(
                engine, spec, image, agent.submission, run_id=run_id, limits=limits_for(spec)
            )
            reward = graded.reward
            detail.update(graded.detail)
            logs.append(f"-- verifier\n{graded.logs}")
    except InfraError as exc:
        status = TrialStatus.UNGRADED
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


def skip_reason(control: Control, spec: SandboxSpec) -> str | None:
    if control.needs == "named" and not spec.named:
        return f"the tests name no file inside {spec.project_dir} for it to work on"
    return control.skip_reason(control_context(spec))


def run_matrix(
    spec: SandboxSpec,
    image: str,
    *,
    engine: Engine,
    run_id: str,
    repeats: int = 3,
    controls: Sequence[Control] = CATALOGUE,
    trial_jobs: int = TRIAL_JOBS,
    progress: Callable[[TrialRecord], None] | None = None,
) -> SandboxResult:
    """Oracle x ``repeats``, the no-op and every control, ``trial_jobs`` trials at a time;
    the result lists them in that order."""
    started = time.monotonic()
    plan: list[tuple[Role, int, Control | None]] = [(Role.ORACLE, i, None) for i in range(repeats)]
    plan.append((Role.NOOP, 0, None))
    plan += [(Role.CONTROL, 0, control) for control in controls]

    def one(item: tuple[Role, int, Control | None]) -> TrialRecord:
        role, repeat, control = item
        reason = skip_reason(control, spec) if control is not None else None
        if control is not None and reason is not None:
            trial = skipped(control, reason)
        else:
            trial = run_trial(
                engine, spec, image, role=role, repeat=repeat, control=control, run_id=run_id
            )
        if progress is not None:
            progress(trial)
        return trial

    # Trials are independent containers: two at a time keep the engine busy while one waits.
    with ThreadPoolExecutor(max_workers=max(1, trial_jobs), thread_name_prefix="sandbox") as pool:
        trials = list(pool.map(one, plan))
    status, reasons = decide(trials)
    return SandboxResult(
        task_dir=str(spec.task_dir),
        status=status,
        trials=tuple(trials),
        reasons=reasons,
        image=image,
        wall_seconds=time.monotonic() - started,
    )


def verify_sandbox_task(
    task_dir: Path | str, *, run_id: str, engine: Engine | None = None, **options: Any
) -> SandboxResult:
    """Read, check the engine has its images, build and run the matrix.

    A folder that is no sandbox task, or whose images this engine lacks, is rejected with its
    problems and no trial; Docker failing is ungraded.
    """
    started = time.monotonic()
    try:
        spec = read_sandbox_task(task_dir)
    except SandboxTaskInvalid as invalid:
        return _refused(task_dir, invalid.problems, started)
    try:
        engine = engine or Engine.from_env()
        missing = unavailable_images(spec, engine)
        if missing:
            return _refused(task_dir, tuple(missing), started)
        built = prepare(spec, engine)
    except InfraError as exc:
        log = f"\n{exc.log[-2000:]}" if exc.log else ""
        return SandboxResult(
            task_dir=str(task_dir),
            status=MatrixStatus.UNGRADED,
            reasons=(f"{exc.message}{log}",),
            wall_seconds=time.monotonic() - started,
        )
    result = run_matrix(spec, built.image_id, engine=engine, run_id=run_id, **options)
    return SandboxResult(
        task_dir=result.task_dir,
        status=result.status,
        trials=result.trials,
        reasons=result.reasons,
        image=result.image,
        build_seconds=built.seconds,
        wall_seconds=time.monotonic() - started,
    )


def _refused(task_dir: Path | str, problems: Sequence[str], started: float) -> SandboxResult:
    return SandboxResult(
        task_dir=str(task_dir),
        status=MatrixStatus.REJECTED,
        reasons=("the folder cannot run here as a sandbox task",),
        problems=tuple(problems),
        wall_seconds=time.monotonic() - started,
    )
