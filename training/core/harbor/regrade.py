"""Re-grading a rollout from its collected ``/app`` with the task's own separate verifier.

    grader = TaskGrader.prepare(task_dir, engine=engine, run_id="regrade-42")  # once per task
    result = grader.grade(trial.app_dir, harbor_reward=trial.reward)          # per rollout
    result.reward, result.agrees, result.evidence

The path is the trial matrix's own (``tasks_review.core.trials``): the task's image, built once
and cached by content; the check in the image, once per task, which gives the grading plan and
the tests that pass on the reference; then per rollout the project's source files, read from the
folder Harbor collected (version-control internals and installed dependencies stay behind, as
when the matrix takes a submission), graded by ``grade_submission`` in a fresh container of the
pristine image with no network: the task's ``tests/test.sh`` judged again by the harness.

The reward never comes from the transcript or from Harbor's reward file; ``agrees`` says whether
Harbor's, kept beside it, is the same. Docker failing leaves a rollout *ungraded* (reward None),
never 0 or 1, as in the matrix.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from groundwork.core.docker import Engine, InfraError, Limits
from tasks_review.core.trials import Baseline, TrialDrop, TrialStatus, check_in_image, prepare
from tasks_review.core.trials.taskdir import TaskSpec, read_tree
from tasks_review.core.trials.verifier import (
    SUBMISSION_MAX_BYTES,
    SUBMISSION_MAX_ENTRIES,
    Submission,
    grade_submission,
)


@dataclass(frozen=True, slots=True)
class Regrade:
    reward: float | None  # None: ungraded
    status: TrialStatus
    harbor_reward: float | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    logs: str = ""
    seconds: float = 0.0

    @property
    def agrees(self) -> bool | None:
        """Whether Harbor's reward is the re-graded one (None when either is missing)."""
        if self.reward is None or self.harbor_reward is None:
            return None
        return math.isclose(self.reward, self.harbor_reward, abs_tol=1e-9)


class Grader(Protocol):
    """Grades rollouts of one kept task: a mined task's ``TaskGrader``, a sandbox task's
    ``training.core.sandbox.SandboxGrader`` (its own tests/test.sh, Harbor's contract)."""

    def grade(self, app_dir: Path | None, *, harbor_reward: float | None = None) -> Regrade: ...


@dataclass(frozen=True, slots=True)
class TaskGrader:
    """What grading any rollout of one task needs; ``problem`` says why none can be graded."""

    engine: Engine
    run_id: str
    spec: TaskSpec | None = None
    image: str | None = None
    limits: Limits = Limits()
    baseline: Baseline | None = None
    problem: str | None = None

    @classmethod
    def prepare(cls, task_dir: Path, *, engine: Engine, run_id: str) -> TaskGrader:
        try:
            prepared = prepare(task_dir, engine, run_id=run_id)
            if prepared.drop is not None or prepared.image is None:
                why = prepared.drop.detail if prepared.drop else "no image"
                return cls(engine, run_id, prepared.spec, problem=f"the task cannot run: {why}")
            checked = check_in_image(prepared, engine=engine, run_id=run_id)
        except InfraError as exc:
            return cls(engine, run_id, problem=f"the task's image could not be prepared: {exc}")
        if isinstance(checked, TrialDrop):
            return cls(
                engine,
                run_id,
                prepared.spec,
                problem=f"the task's check no longer behaves in its image: {checked.detail}",
            )
        return cls(engine, run_id, prepared.spec, prepared.image.image_id, prepared.limits, checked)

    def grade(self, app_dir: Path | None, *, harbor_reward: float | None = None) -> Regrade:
        started = time.monotonic()
        if self.problem or self.spec is None or self.image is None or self.baseline is None:
            return ungraded(self.problem or "not prepared", harbor_reward, started)
        submission = collected(app_dir, harbor_reward, started)
        if isinstance(submission, Regrade):
            return submission
        try:
            graded = grade_submission(
                self.engine,
                self.spec,
                self.image,
                submission,
                facts=self.baseline.facts,
                plan=self.baseline.plan,
                run_id=self.run_id,
                limits=self.limits,
            )
        except InfraError as exc:
            return ungraded(exc.message, harbor_reward, started, logs=exc.log)
        return Regrade(
            graded.verdict.reward,
            TrialStatus.GRADED,
            harbor_reward,
            dict(graded.detail),
            graded.logs,
            time.monotonic() - started,
        )


def collected(
    app_dir: Path | None, harbor_reward: float | None, started: float
) -> Submission | Regrade:
    """The submission in the folder Harbor collected, or the rollout's result when there is none
    to grade: no folder is ungraded; a project too large to take is the agent's doing, graded 0
    (as in the matrix)."""
    if app_dir is None or not Path(app_dir).is_dir():
        return ungraded(f"no collected project folder at {app_dir}", harbor_reward, started)
    submission = submission_from(Path(app_dir))
    if submission.problem:
        return Regrade(
            0.0,
            TrialStatus.GRADED,
            harbor_reward,
            {"reasons": [submission.problem]},
            seconds=time.monotonic() - started,
        )
    return submission


def submission_from(app_dir: Path) -> Submission:
    """The project's source files in a collected folder, within the verifier's size limits."""
    files = read_tree(app_dir)
    size = sum(len(entry.data) for entry in files.values())
    if size > SUBMISSION_MAX_BYTES or len(files) > SUBMISSION_MAX_ENTRIES:
        return Submission(
            problem=f"the submission exceeds the size limit ({len(files)} files, {size} bytes)"
        )
    return Submission(files=files)


def ungraded(why: str, harbor_reward: float | None, started: float, *, logs: str = "") -> Regrade:
    return Regrade(
        None,
        TrialStatus.UNGRADED,
        harbor_reward,
        {"infra_error": why},
        logs,
        time.monotonic() - started,
    )
