"""Re-grading a rollout of a sandbox task from its collected project, by the task's own tests.

    grader = SandboxGrader.prepare(task_dir, engine=engine, run_id="regrade-42")  # once per task
    result = grader.grade(trial.app_dir, harbor_reward=trial.reward)             # per rollout

The same ``Regrade`` as a mined task's (``training.core.harbor.regrade``), through the same
separate verifier the sandbox matrix kept the task with (``verifier.grade_app``): the task's
image built once (cached by content), then per rollout the collected folder's regular files,
version-control internals and installed dependencies left behind, graded in a fresh container.
Docker failing, or a test.sh that gives no reward, leaves the rollout *ungraded* with the
reason, never 0 or 1; a project too large to take is the agent's doing and scores 0.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from groundwork.core.docker import Engine, InfraError, Limits
from tasks_review.core.trials.model import TrialStatus
from training.core.harbor.regrade import Regrade, collected, ungraded

from .folder import SandboxSpec, SandboxTaskInvalid, read_sandbox_task, unavailable_images
from .matrix import limits_for, prepare
from .verifier import grade_app


@dataclass(frozen=True, slots=True)
class SandboxGrader:
    """What grading any rollout of one sandbox task needs; ``problem`` says why none can be."""

    engine: Engine
    run_id: str
    spec: SandboxSpec | None = None
    image: str | None = None
    limits: Limits = Limits()
    problem: str | None = None

    @classmethod
    def prepare(cls, task_dir: Path, *, engine: Engine, run_id: str) -> SandboxGrader:
        try:
            spec = read_sandbox_task(task_dir)
        except SandboxTaskInvalid as invalid:
            return cls(engine, run_id, problem=f"the task folder is no longer usable: {invalid}")
        try:
            missing = unavailable_images(spec, engine)
            if missing:
                return cls(engine, run_id, spec, problem="; ".join(missing))
            built = prepare(spec, engine)
        except InfraError as exc:
            return cls(engine, run_id, spec, problem=f"the task's image could not be built: {exc}")
        return cls(engine, run_id, spec, built.image_id, limits_for(spec))

    def grade(self, app_dir: Path | None, *, harbor_reward: float | None = None) -> Regrade:
        started = time.monotonic()
        if self.problem or self.spec is None or self.image is None:
            return ungraded(self.problem or "not prepared", harbor_reward, started)
        submission = collected(app_dir, harbor_reward, started)
        if isinstance(submission, Regrade):
            return submission
        try:
            graded = grade_app(
                self.engine,
                self.spec,
                self.image,
                submission,
                run_id=self.run_id,
                limits=self.limits,
            )
        except InfraError as exc:
            return ungraded(exc.message, harbor_reward, started, logs=exc.log)
        if graded.reward is None:
            why = graded.problem or "no reward"
            return ungraded(why, harbor_reward, started, logs=graded.logs)
        return Regrade(
            graded.reward,
            TrialStatus.GRADED,
            harbor_reward,
            dict(graded.detail),
            graded.logs,
            time.monotonic() - started,
        )
