"""An authored task's trial matrix: its image built once, then oracle, no-op and controls.

    result = verify_authored_task(task_dir, run_id="authored-7")      # or, step by step:
    spec = read_authored_task(task_dir)
    image = prepare(spec, engine)                                   # built once, by content
    result = run_matrix(spec, image.image_id, engine=engine, run_id="authored-7")
    result.status, result.won                                       # kept? which controls won

Every trial is two containers of the task's image, one after the other, run by the mined tasks'
own trial loop (``tasks_review.core.trials.runner``) with this kind of task's parts
(``AuthoredTrial``): the agent's (the task's own ``solution/solve.sh`` uploaded to ``/solution``
and run as Harbor's oracle agent runs it, nothing for the no-op, or a control's tampering),
stopped and copied out, then the separate verifier's (``verifier.grade_app``). The task is kept
only when the oracle scores exactly full reward on every repeat and the no-op and every
applicable control exactly 0; a trial Docker failed under is *ungraded*, never 0 or 1 (the
loop's ``decide`` rules).

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundwork.core.docker import BuiltImage, Engine, FileEntry, InfraError, Limits
from groundwork.core.docker.engine import Sandbox
from tasks_review.core.trials.controls import Control, ControlContext
from tasks_review.core.trials.model import MatrixStatus, Role, TrialRecord, TrialStatus
from tasks_review.core.trials.runner import TRIAL_JOBS, Scored, TaskUnusable, run_trials
from tasks_review.core.trials.verifier import Submission

from .controls import CATALOGUE, control_context
from .folder import PATHS, AuthoredSpec, AuthoredTaskInvalid, read_authored_task, unavailable_images
from .verifier import LOG_DIRS, grade_app, image_user

CONTROL_SECONDS = 120.0
SOLUTION_DIR = str(PATHS.solution_dir)


@dataclass(frozen=True, slots=True)
class AuthoredResult:
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


def limits_for(spec: AuthoredSpec) -> Limits:
    return Limits(
        cpus=spec.cpus,
        memory_bytes=spec.memory_mb << 20,
        pids=512,
        timeout=spec.verifier_seconds,
    )


def prepare(spec: AuthoredSpec, engine: Engine) -> BuiltImage:
    """The task's image, built once per content of environment/ (offline). InfraError if not."""
    return engine.build(spec.context, timeout=spec.build_seconds)


@dataclass(frozen=True, slots=True)
class AuthoredTrial:
    """An authored task in the one trial loop (``tasks_review.core.trials.runner.TrialTask``):
    its containers as Harbor starts them (the task's users, workdir and env, the log folders
    open), its oracle the task's own solution/, graded by its own tests/test.sh."""

    spec: AuthoredSpec
    image: str
    control_seconds: float | None = CONTROL_SECONDS
    context: ControlContext = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", control_context(self.spec))

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def project_dir(self) -> str:
        return self.spec.project_dir

    @contextmanager
    def agent_box(self, engine: Engine, run_id: str) -> Iterator[Sandbox]:
        spec = self.spec
        user = spec.agent_user or image_user(engine, self.image)
        with engine.sandbox(
            self.image,
            run_id=run_id,
            user=user,
            limits=limits_for(spec),
            workdir=spec.workdir,
            env=spec.env or None,
        ) as box:
            # Harbor gives every agent its log folders, open to any user: a forger can reach them.
            dirs = " ".join(LOG_DIRS)
            box.exec(["sh", "-c", f"mkdir -p {dirs} && chmod 777 {dirs}"], user="root", timeout=60)
            yield box

    def solve(self, box: Sandbox, logs: list[str], detail: dict[str, Any]) -> None:
        # As Harbor's oracle agent: solution/ uploaded as root, solve.sh run as the agent.
        files = {
            rel: FileEntry(e.data, executable=e.executable or rel == "solve.sh")
            for rel, e in self.spec.solution_files.items()
        }
        box.put_files(SOLUTION_DIR, files, owner=(0, 0))
        acted = box.exec(
            ["bash", "-c", f"{SOLUTION_DIR}/solve.sh"],
            env={"DEBIAN_FRONTEND": "noninteractive", **self.spec.solution_env},
            timeout=self.spec.agent_seconds,
        )
        logs.append(f"-- solve.sh (exit {acted.exit_code})\n{acted.stdout}{acted.stderr}")
        detail["solve_exit_code"] = acted.exit_code

    def after_act(
        self, box: Sandbox, control: Control | None, logs: list[str], detail: dict[str, Any]
    ) -> bool:
        return False  # the task's own test.sh is the only grader: no naive one to compare

    def grade(self, engine: Engine, submission: Submission, *, run_id: str) -> Scored:
        graded = grade_app(
            engine, self.spec, self.image, submission, run_id=run_id, limits=limits_for(self.spec)
        )
        # As Harbor, which records a verifier error and no reward: nothing to score.
        problem = f"the task's tests/test.sh gave no reward: {graded.problem}"
        return Scored(
            graded.reward, graded.logs, graded.detail, problem if graded.problem else None
        )

    def skip_reason(self, control: Control) -> str | None:
        return skip_reason(control, self.spec)


def skip_reason(control: Control, spec: AuthoredSpec) -> str | None:
    if control.needs == "named" and not spec.named:
        return f"the tests name no file inside {spec.project_dir} for it to work on"
    return control.skip_reason(control_context(spec))


def authored_task(task_dir: Path, *, engine: Engine, run_id: str) -> AuthoredTrial:
    """A kept authored task ready to grade again: its folder read and its image built.
    TaskUnusable when it no longer can be; InfraError when Docker fails."""
    try:
        spec = read_authored_task(task_dir)
    except AuthoredTaskInvalid as invalid:
        raise TaskUnusable(f"the task folder is no longer usable: {invalid}") from None
    missing = unavailable_images(spec, engine)
    if missing:
        raise TaskUnusable("; ".join(missing))
    return AuthoredTrial(spec, prepare(spec, engine).image_id)


def run_matrix(
    spec: AuthoredSpec,
    image: str,
    *,
    engine: Engine,
    run_id: str,
    repeats: int = 3,
    controls: Sequence[Control] = CATALOGUE,
    trial_jobs: int = TRIAL_JOBS,
    progress: Callable[[TrialRecord], None] | None = None,
) -> AuthoredResult:
    """Oracle x ``repeats``, the no-op and every control through the one trial loop
    (``run_trials``), ``trial_jobs`` trials at a time; the result lists them in that order."""
    started = time.monotonic()
    ran = run_trials(
        AuthoredTrial(spec, image),
        controls=controls,
        engine=engine,
        run_id=run_id,
        repeats=repeats,
        progress=progress,
        trial_jobs=trial_jobs,
    )
    return AuthoredResult(
        task_dir=str(spec.task_dir),
        status=ran.status,
        trials=ran.trials,
        reasons=ran.reasons,
        image=image,
        wall_seconds=time.monotonic() - started,
    )


def verify_authored_task(
    task_dir: Path | str, *, run_id: str, engine: Engine | None = None, **options: Any
) -> AuthoredResult:
    """Read, check the engine has its images, build and run the matrix.

    A folder that is no authored task, or whose images this engine lacks, is rejected with its
    problems and no trial; Docker failing is ungraded.
    """
    started = time.monotonic()
    try:
        spec = read_authored_task(task_dir)
    except AuthoredTaskInvalid as invalid:
        return _refused(task_dir, invalid.problems, started)
    try:
        engine = engine or Engine.from_env()
        missing = unavailable_images(spec, engine)
        if missing:
            return _refused(task_dir, tuple(missing), started)
        built = prepare(spec, engine)
    except InfraError as exc:
        log = f"\n{exc.log[-2000:]}" if exc.log else ""
        return AuthoredResult(
            task_dir=str(task_dir),
            status=MatrixStatus.UNGRADED,
            reasons=(f"{exc.message}{log}",),
            wall_seconds=time.monotonic() - started,
        )
    result = run_matrix(spec, built.image_id, engine=engine, run_id=run_id, **options)
    return AuthoredResult(
        task_dir=result.task_dir,
        status=result.status,
        trials=result.trials,
        reasons=result.reasons,
        image=result.image,
        build_seconds=built.seconds,
        wall_seconds=time.monotonic() - started,
    )


def _refused(task_dir: Path | str, problems: Sequence[str], started: float) -> AuthoredResult:
    return AuthoredResult(
        task_dir=str(task_dir),
        status=MatrixStatus.REJECTED,
        reasons=("the folder cannot run here as an authored task",),
        problems=tuple(problems),
        wall_seconds=time.monotonic() - started,
    )
