"""Prepare a task's image, check it in the image, and run its trial matrix.

    prepared = prepare(task_dir, engine)                # build once (cached by content)
    baseline = check_in_image(prepared, engine=engine, run_id=run_id)  # or a TrialDrop
    result = run_matrix(prepared, engine=engine, run_id=run_id, baseline=baseline)
    result.kept, result.trials                          # every trial is a TrialRecord

Every trial is two containers of the candidate's image, one after the other: the agent's
(the oracle's solve.sh, nothing for the no-op, or a control's tampering), stopped and copied
out, then the separate verifier's (``verifier``). Containers carry the run id label and are
removed when their block ends, on errors and KeyboardInterrupt too; ``Engine.cleanup`` finds
what a killed process left. Docker failing under a trial makes it *ungraded* (reward None),
never 0 or 1. A candidate is kept only when the oracle scored exactly 1.0 on every repeat,
the no-op 0 and every applicable control 0.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..docker import BuiltImage, Engine, InfraError, Limits
from ..docker import labels as lbl
from ..docker.engine import Sandbox
from ..pool import run_each
from .assertions import CheckSize, check_size
from .controls import CATALOGUE, NPM_SCRIPT, Control, ControlContext, source_files
from .deps import Dependency, OfflineSources, declared_dependencies, unavailable
from .model import (
    MatrixResult,
    MatrixStatus,
    Role,
    TrialDrop,
    TrialDropReason,
    TrialRecord,
    TrialStatus,
    trim,
)
from .plan import GradingPlan, Requirement, named_paths, plan_check, test_files
from .results import Verdict
from .taskdir import ReferenceFacts, TaskSpec, read_task, record_reference
from .verifier import (
    SOLUTION_DIR,
    Graded,
    Submission,
    grade_submission,
    list_entries,
    put_solution,
    take_submission,
)

ORACLE_REWARD = 1.0
# Containers for trials get at most this, whatever task.toml asks: the matrix runs many of
# them, on machines with two cores.
MAX_CPUS = 1.0
MAX_MEMORY_MB = 2048
# Trials of one matrix run this many at a time (two containers each, one after the other).
TRIAL_JOBS = 2


class Cancelled(Exception):
    """run_matrices stopped a matrix between trials (the caller was interrupted)."""


@dataclass(frozen=True, slots=True)
class PreparedTask:
    spec: TaskSpec
    image: BuiltImage | None  # None when dropped before the build
    limits: Limits
    dependencies: tuple[Dependency, ...] = ()
    drop: TrialDrop | None = None
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Baseline:
    """The check inside the image: failing on the start, passing on the reference."""

    plan: GradingPlan
    facts: ReferenceFacts  # what grading needs: passing tests, failing ones, control candidates
    start: Verdict
    reference: Verdict
    seconds: float
    logs: str = ""
    size: CheckSize = CheckSize(0, 0, 0)  # how much the check asserts

    @property
    def reference_passed(self) -> Mapping[str, int]:
        return self.facts.passed


def task_limits(spec: TaskSpec) -> Limits:
    return Limits(
        cpus=min(spec.cpus, MAX_CPUS),
        memory_bytes=min(spec.memory_mb, MAX_MEMORY_MB) << 20,
        pids=512,
        timeout=spec.check_timeout,
    )


def _start_bytes(spec: TaskSpec) -> dict[str, bytes]:
    return {path: entry.data for path, entry in spec.start_files.items()}


# -- prepare ------------------------------------------------------------------------------------


def prepare(
    task_dir: Path | str,
    engine: Engine,
    *,
    sources: OfflineSources = OfflineSources(),  # noqa: B008 - frozen, so one shared default is safe
    run_id: str = "prepare",
) -> PreparedTask:
    """Build the task's image once (cached by content) and check that what it needs is there.

    Drops (``dependency_unavailable_offline``) when the project declares dependencies the
    offline sources lack, before building, or when the built image lacks a program or Python
    module the check runs. InfraError when the build or the engine fails: the caller records
    the candidate as ungraded.
    """
    started = time.monotonic()
    spec = read_task(task_dir)
    wheels = spec.context / "wheels"
    if sources.wheelhouse is None and wheels.is_dir():
        # The wheels the task carries (taskfiles.PythonPackages) are its Python source.
        sources = dataclasses.replace(sources, wheelhouse=wheels)
    limits = task_limits(spec)
    files = _start_bytes(spec)
    dependencies = tuple(declared_dependencies(files))
    missing = unavailable(dependencies, sources)
    if missing:
        detail = "; ".join(f"{dep}: {why}" for dep, why in missing[:5])
        missing_drop = TrialDrop(TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE, detail, "prepare")
        return PreparedTask(
            spec, None, limits, dependencies, missing_drop, time.monotonic() - started
        )
    image = engine.build(spec.context)
    plan = plan_check(spec.command, spec.workdir_rel, files)
    lacking = probe(engine, spec, image.image_id, plan.requirements, run_id=run_id, limits=limits)
    drop: TrialDrop | None = None
    if lacking:
        drop = TrialDrop(
            TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE,
            "the check needs "
            + ", ".join(lacking)
            + ", which the image lacks and no offline source provides",
            "prepare",
        )
    return PreparedTask(spec, image, limits, dependencies, drop, time.monotonic() - started)


def probe(
    engine: Engine,
    spec: TaskSpec,
    image: str,
    requirements: Sequence[Requirement],
    *,
    run_id: str,
    limits: Limits,
) -> list[str]:
    """The requirements the image does not meet, e.g. ``python module pytest``."""
    if not requirements:
        return []
    lines = []
    for req in requirements:
        folder = shlex.quote(f"{spec.project_dir}/{req.cwd}")
        name = shlex.quote(req.name)
        enter = f"cd {folder} 2>/dev/null || cd {shlex.quote(spec.project_dir)}"
        if req.kind == "module":
            python = shlex.quote(req.python)
            test = (
                f'{python} -c "import importlib.util, sys; '
                f'sys.exit(importlib.util.find_spec(sys.argv[1]) is None)" {name}'
            )
            lines.append(f"({enter}; {test}) >/dev/null 2>&1 || echo 'python module {req.name}'")
        else:
            # npm puts node_modules/.bin first on PATH for scripts: a project's own tools.
            test = f'PATH="$PWD/node_modules/.bin:$PATH" command -v {name}'
            lines.append(f"({enter}; {test}) >/dev/null 2>&1 || echo 'program {req.name}'")
    with engine.sandbox(image, run_id=run_id, limits=limits) as box:
        done = box.exec(["sh", "-c", "\n".join(lines)], timeout=120)
    if done.timed_out or done.exit_code != 0:
        raise InfraError(f"probing the image for the check's tools failed: {done.stderr[-500:]}")
    return [line for line in done.stdout.splitlines() if line.strip()]


# -- the check in the image ---------------------------------------------------------------------


def check_in_image(prepared: PreparedTask, *, engine: Engine, run_id: str) -> Baseline | TrialDrop:
    """Grade the starting files, apply solve.sh, grade the reference files.

    Both go through the task's own grader in fresh verifier containers, with no reference facts
    yet: the copies the grader makes of every test show which can serve as controls. Drops with
    ``check_not_failing_at_start`` or ``check_not_passing_at_reference``; InfraError when
    Docker fails.
    """
    if prepared.image is None:
        raise ValueError("the task was dropped before its image was built")
    spec = prepared.spec
    started = time.monotonic()
    image = prepared.image.image_id

    def graded(submission: Submission, plan: GradingPlan) -> Graded:
        return grade_submission(
            engine,
            spec,
            image,
            submission,
            facts=None,
            plan=plan,
            run_id=run_id,
            limits=prepared.limits,
        )

    at_start = graded(
        Submission(files=dict(spec.start_files)),
        plan_check(spec.command, spec.workdir_rel, _start_bytes(spec)),
    )
    with engine.sandbox(image, run_id=run_id, limits=prepared.limits) as box:
        put_solution(box, spec)
        solved = box.exec(["bash", f"{SOLUTION_DIR}/solve.sh"], workdir=spec.project_dir)
        names = list_entries(box, spec.project_dir) if box.alive else []
        if box.alive:
            box.stop()
        reference = take_submission(box, spec.project_dir, names)
    if reference.problem:
        raise InfraError(f"copying the reference files out failed: {reference.problem}")
    ref_bytes = {p: e.data for p, e in reference.files.items()}
    plan = plan_check(spec.command, spec.workdir_rel, ref_bytes)
    at_ref = graded(reference, plan)
    logs = trim(
        f"-- starting files\n{at_start.logs}\n"
        f"-- solve.sh (exit {solved.exit_code})\n{solved.stdout}{solved.stderr}\n"
        f"-- reference files\n{at_ref.logs}"
    )
    if not solved.ok:
        return TrialDrop(
            TrialDropReason.CHECK_NOT_PASSING_AT_REFERENCE,
            f"solution/solve.sh exited with status {solved.exit_code}",
            "check",
            logs,
        )
    if at_start.verdict.reward == ORACLE_REWARD:
        return TrialDrop(
            TrialDropReason.CHECK_NOT_FAILING_AT_START,
            f"the check passes on the starting files inside the image ({plan.mode} grading)",
            "check",
            logs,
        )
    if at_ref.verdict.reward != ORACLE_REWARD:
        return TrialDrop(
            TrialDropReason.CHECK_NOT_PASSING_AT_REFERENCE,
            "; ".join(at_ref.verdict.reasons[:3]),
            "check",
            logs,
        )
    passed = dict(at_ref.verdict.passed)
    facts = ReferenceFacts(
        passed=passed,
        start_failed=tuple(sorted(set(passed) - set(at_start.verdict.passed))),
        controls={k: tuple(v) for k, v in at_ref.verdict.controls.items()},
    )
    return Baseline(
        plan=plan,
        facts=facts,
        start=at_start.verdict,
        reference=at_ref.verdict,
        seconds=time.monotonic() - started,
        logs=logs,
        size=check_size(ref_bytes, len(passed)),
    )


# -- trials -------------------------------------------------------------------------------------


def control_context(spec: TaskSpec, baseline: Baseline) -> ControlContext:
    files = _start_bytes(spec)
    tests = test_files(files)
    runners = set(baseline.plan.structured)
    if baseline.plan.scripts:
        runners.add(NPM_SCRIPT)
    return ControlContext(
        language=spec.language,
        runners=frozenset(runners),
        project_dir=spec.project_dir,
        workdir=spec.workdir,
        tests=tuple(tests),
        sources=tuple(source_files(files, spec.language, set(tests))),
        named=tuple(named_paths(spec.command, files)),
    )


@dataclass(slots=True)
class _AgentRun:
    submission: Submission
    logs: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


def act(
    box: Sandbox,
    spec: TaskSpec,
    *,
    role: Role,
    control: Control | None,
    context: ControlContext,
    logs: list[str],
    detail: dict[str, Any],
) -> None:
    """What the agent does in its container: solve.sh, nothing (no-op), or a control's tampering."""
    if role is Role.ORACLE:
        put_solution(box, spec)
        acted = box.exec(["bash", f"{SOLUTION_DIR}/solve.sh"], workdir=spec.project_dir)
        logs.append(f"-- solve.sh (exit {acted.exit_code})\n{acted.stdout}{acted.stderr}")
        detail["solve_exit_code"] = acted.exit_code
    elif control is not None:
        if control.root_setup:
            setup = box.exec(["sh", "-c", control.root_setup], user="root", timeout=60)
            if not setup.ok:
                raise InfraError(f"control {control.name}: setup failed: {setup.stderr}")
        if control.files:
            box.put_files(spec.project_dir, dict(control.files))
        acted = box.exec(["sh", "-c", control.shell], workdir=spec.project_dir, env=context.env())
        logs.append(f"-- {control.name} (exit {acted.exit_code})\n{acted.stdout}{acted.stderr}")
        detail["control_exit_code"] = acted.exit_code


def _agent_phase(
    engine: Engine,
    prepared: PreparedTask,
    *,
    role: Role,
    control: Control | None,
    context: ControlContext,
    run_id: str,
    naive: bool,
) -> _AgentRun:
    """The "agent": acts on the starting files, then its container is stopped and copied."""
    spec = prepared.spec
    assert prepared.image is not None
    logs: list[str] = []
    detail: dict[str, Any] = {}
    with engine.sandbox(prepared.image.image_id, run_id=run_id, limits=prepared.limits) as box:
        act(box, spec, role=role, control=control, context=context, logs=logs, detail=detail)
        names = list_entries(box, spec.project_dir) if box.alive else []
        if not box.alive:
            # Killed at its time limit: an agent that runs out of time delivers nothing.
            detail["agent_timed_out"] = True
        if naive and control is not None and box.alive:
            # The recorded check where the agent left the project, its status trusted: what a
            # naive grader would score. Evidence that the control is an attack at all.
            script = f"cd {shlex.quote(spec.workdir)} || exit 97\n{spec.command}"
            ran = box.exec(["bash", "-c", script], workdir=spec.project_dir)
            detail["naive_exit_code"] = ran.exit_code
            detail["naive_timed_out"] = ran.timed_out
            logs.append(
                f"-- naive check (exit {ran.exit_code})\n{ran.stdout[-1500:]}{ran.stderr[-1500:]}"
            )
            if box.alive:
                names = list_entries(box, spec.project_dir)
        if box.alive:
            box.stop()
        submission = take_submission(box, spec.project_dir, names)
    return _AgentRun(submission, logs, detail)


def run_trial(
    prepared: PreparedTask,
    baseline: Baseline,
    *,
    role: Role,
    repeat: int = 0,
    control: Control | None = None,
    context: ControlContext | None = None,
    engine: Engine,
    run_id: str,
    naive: bool = False,
) -> TrialRecord:
    """One trial: the agent's container, then the separate verifier's. Never raises InfraError."""
    spec = prepared.spec
    name = control.name if control is not None else str(role)
    expected = ORACLE_REWARD if role is Role.ORACLE else 0.0
    context = context or control_context(spec, baseline)
    started_at = datetime.now(UTC)
    started = time.monotonic()
    detail: dict[str, Any] = {}
    logs: list[str] = []
    reward: float | None
    try:
        agent = _agent_phase(
            engine,
            prepared,
            role=role,
            control=control,
            context=context,
            run_id=run_id,
            naive=naive,
        )
        logs += agent.logs
        detail.update(agent.detail)
        detail["agent_seconds"] = round(time.monotonic() - started, 3)
        if agent.submission.problem:
            reward, status = 0.0, TrialStatus.GRADED
            detail["reasons"] = [agent.submission.problem]
        else:
            assert prepared.image is not None
            graded = grade_submission(
                engine,
                spec,
                prepared.image.image_id,
                agent.submission,
                facts=baseline.facts,
                plan=baseline.plan,
                run_id=run_id,
                limits=prepared.limits,
            )
            reward, status = graded.verdict.reward, TrialStatus.GRADED
            detail.update(graded.detail)
            logs.append(f"-- verifier\n{graded.logs}")
    except InfraError as exc:
        reward, status = None, TrialStatus.UNGRADED
        detail["infra_error"] = exc.message
        logs.append(f"-- infrastructure error: {exc.message}\n{exc.log}")
    finished = time.monotonic()
    return TrialRecord(
        role=role,
        name=name,
        repeat=repeat,
        reward=reward,
        expected=expected,
        status=status,
        started=started_at,
        finished=datetime.now(UTC),
        seconds=finished - started,
        logs=trim("\n".join(logs)),
        detail=detail,
    )


def _skipped(control: Control, reason: str) -> TrialRecord:
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

    A graded trial off its expected reward rejects the candidate whatever else happened;
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
            f"{t.name} #{t.repeat} ungraded: {t.detail.get('infra_error', '')}" for t in ungraded
        )
    return MatrixStatus.KEPT, ()


def run_matrix(
    prepared: PreparedTask,
    *,
    repeats: int = 3,
    controls: Sequence[Control] = CATALOGUE,
    engine: Engine,
    run_id: str,
    baseline: Baseline | TrialDrop | None = None,
    naive: bool = False,
    cancel: threading.Event | None = None,
    progress: Callable[[TrialRecord], None] | None = None,
    trial_jobs: int = TRIAL_JOBS,
) -> MatrixResult:
    """Oracle x ``repeats``, the no-op and every control, in the candidate's own image,
    ``trial_jobs`` trials at a time; the result lists them in that order.

    Without ``baseline`` the check in the image runs first (and may drop the candidate).
    ``naive`` also runs each control's check where the agent left it, trusting its exit
    status, to record whether the control would fool such a grader (evidence, not a verdict).
    """
    started = time.monotonic()
    spec = prepared.spec
    common: dict[str, Any] = {
        "task_dir": str(spec.task_dir),
        "image": prepared.image.image_id if prepared.image else None,
        "build_seconds": prepared.image.seconds if prepared.image else 0.0,
    }
    if prepared.drop is not None:
        return MatrixResult(status=MatrixStatus.DROPPED, drop=prepared.drop, **common)
    if baseline is None:
        try:
            baseline = check_in_image(prepared, engine=engine, run_id=run_id)
        except InfraError as exc:
            return MatrixResult(
                status=MatrixStatus.UNGRADED,
                reasons=(f"the check in the image could not run: {exc.message}",),
                wall_seconds=time.monotonic() - started,
                **common,
            )
    if isinstance(baseline, TrialDrop):
        return MatrixResult(
            status=MatrixStatus.DROPPED,
            drop=baseline,
            wall_seconds=time.monotonic() - started,
            **common,
        )
    record_reference(spec.task_dir, baseline.facts)
    context = control_context(spec, baseline)
    plan: list[tuple[Role, int, Control | None]] = [(Role.ORACLE, i, None) for i in range(repeats)]
    plan.append((Role.NOOP, 0, None))
    plan += [(Role.CONTROL, 0, control) for control in controls]
    stop = cancel or threading.Event()

    def one(item: tuple[Role, int, Control | None]) -> TrialRecord:
        role, repeat, control = item
        if stop.is_set():
            raise Cancelled(f"cancelled before {control.name if control else role} of {spec.name}")
        reason = control.skip_reason(context) if control is not None else None
        if control is not None and reason is not None:
            trial = _skipped(control, reason)
        else:
            trial = run_trial(
                prepared,
                baseline,
                role=role,
                repeat=repeat,
                control=control,
                context=context,
                engine=engine,
                run_id=run_id,
                naive=naive,
            )
        if progress is not None:
            progress(trial)
        return trial

    # Trials are independent containers: a few at once keep the engine busy while one waits
    # on a container start or a copy (see docs/BENCHMARKS.md).
    with ThreadPoolExecutor(max_workers=max(1, trial_jobs), thread_name_prefix="trial") as pool:
        try:
            trials = list(pool.map(one, plan))
        except BaseException:
            stop.set()
            if cancel is None:  # run_matrices kills the containers of every matrix itself
                _kill_own_containers(engine, run_id)
            raise
    status, reasons = decide(trials)
    return MatrixResult(
        status=status,
        trials=tuple(trials),
        reasons=reasons,
        check_seconds=baseline.seconds,
        wall_seconds=time.monotonic() - started,
        check=baseline.size.to_dict(),
        **common,
    )


def run_matrices(
    prepared: Sequence[PreparedTask],
    *,
    jobs: int,
    engine: Engine,
    run_id: str,
    **options: Any,
) -> list[MatrixResult]:
    """``run_matrix`` for several candidates, ``jobs`` at a time (``run_each``'s threads).

    On KeyboardInterrupt the running matrices stop after their current trial, whose
    containers are killed, and the interrupt is raised again. A matrix that raises is
    ungraded (a harness error is no verdict on the task) and the others still run.
    """
    outcomes = run_each(
        prepared,
        lambda task, stop: run_matrix(task, engine=engine, run_id=run_id, cancel=stop, **options),
        jobs=jobs,
        on_cancel=lambda: _kill_own_containers(engine, run_id),
        name="trials",
    )
    return [_harness_error(o.item, o.error) if o.error else o.result() for o in outcomes]


def _harness_error(task: PreparedTask, error: Exception) -> MatrixResult:
    return MatrixResult(
        task_dir=str(task.spec.task_dir),
        status=MatrixStatus.UNGRADED,
        reasons=(f"harness error: {type(error).__name__}: {error}",),
    )


def _kill_own_containers(engine: Engine, run_id: str) -> None:
    mine = lbl.owner_token()
    with contextlib.suppress(InfraError):
        for container in engine.containers(label=f"{lbl.RUN}={run_id}"):
            if container.labels.get(lbl.OWNER) == mine:
                with contextlib.suppress(Exception):
                    engine.api.kill(container.id)


def verify_task(
    task_dir: Path | str,
    *,
    run_id: str,
    engine: Engine | None = None,
    sources: OfflineSources = OfflineSources(),  # noqa: B008 - frozen, so one shared default is safe
    **options: Any,
) -> MatrixResult:
    """Prepare, check in the image and run the matrix; Docker failures end ungraded."""
    started = time.monotonic()
    try:
        engine = engine or Engine.from_env()
        prepared = prepare(task_dir, engine, sources=sources, run_id=run_id)
    except InfraError as exc:
        log = f"\n{exc.log[-2000:]}" if exc.log else ""
        return MatrixResult(
            task_dir=str(task_dir),
            status=MatrixStatus.UNGRADED,
            reasons=(f"{exc.message}{log}",),
            wall_seconds=time.monotonic() - started,
        )
    return run_matrix(prepared, engine=engine, run_id=run_id, **options)
