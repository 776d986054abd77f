"""One trial: the agent's container (the oracle's solve.sh, nothing, or a control's tampering),
stopped and copied out, then the separate verifier's. Docker failing under it makes the trial
ungraded (reward None), never 0 or 1.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from groundwork.core.docker import Engine, InfraError
from groundwork.core.docker.engine import Sandbox

from .baseline import ORACLE_REWARD, Baseline
from .controls import NPM_SCRIPT, Control, ControlContext, family_sources, source_files
from .image import PreparedTask
from .model import Role, TrialRecord, TrialStatus, trim
from .plan import named_paths, test_files
from .taskdir import TaskSpec
from .verifier import (
    SOLUTION_DIR,
    Submission,
    grade_submission,
    list_entries,
    put_solution,
    take_submission,
)


def control_context(spec: TaskSpec, baseline: Baseline) -> ControlContext:
    files = spec.start_bytes()
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
        # build and extend: also the modules the agent would write (controls/partial.py).
        sources=tuple(
            sorted({*source_files(files, spec.language, set(tests)), *family_sources(spec)})
        ),
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
    # The task's [environment.env], as Harbor starts the agent's container: the services image's
    # entrypoint starts the services it names.
    env = dict(spec.env) or None
    with engine.sandbox(
        prepared.image.image_id, run_id=run_id, limits=prepared.limits, env=env
    ) as box:
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
