"""Re-grading a rollout from its collected ``/app`` with the task's own separate verifier.

    grader = TaskGrader.prepare(task_dir, engine=engine, run_id="regrade-42")  # once per task
    grader = TaskGrader.prepare(task_dir, engine=engine, run_id=..., source=authored_task)
    result = grader.grade(trial.app_dir, harbor_reward=trial.reward)          # per rollout
    result.reward, result.agrees, result.evidence

One grader for every kind of task; ``source`` says where the task comes from and gives the same
``TrialTask`` the trial matrix kept it with (``tasks_review.core.trials.runner``). A mined task
(``mined_task``): its image, built once and cached by content, and the check in the image, once
per task, which gives the grading plan and the tests that pass on the reference; a user-written
one (``training.core.authored.authored_task``): its image, graded by its own tests/test.sh on
Harbor's separate-verifier contract. Then per rollout the project's source files, read from the
folder Harbor collected (version-control internals and installed dependencies stay behind, as
when the matrix takes a submission), graded by the task's verifier in a fresh container of the
pristine image with no network.

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
from typing import Any

from groundwork.core.docker import Engine, InfraError
from tasks_review.core.trials import TaskSource, TaskUnusable, TrialStatus, TrialTask, mined_task
from tasks_review.core.trials.taskdir import read_tree
from tasks_review.core.trials.verifier import (
    SUBMISSION_MAX_BYTES,
    SUBMISSION_MAX_ENTRIES,
    Submission,
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


@dataclass(frozen=True, slots=True)
class TaskGrader:
    """What grading any rollout of one kept task needs: the task as the trial matrix tried it,
    from its ``source`` (a mined task by default; ``training.core.authored.authored_task`` for a
    user-written one, graded by its own tests/test.sh). ``problem`` says why none can be."""

    engine: Engine
    run_id: str
    task: TrialTask | None = None
    problem: str | None = None

    @classmethod
    def prepare(
        cls, task_dir: Path, *, engine: Engine, run_id: str, source: TaskSource = mined_task
    ) -> TaskGrader:
        try:
            return cls(engine, run_id, source(Path(task_dir), engine=engine, run_id=run_id))
        except TaskUnusable as unusable:
            return cls(engine, run_id, problem=str(unusable))
        except InfraError as exc:
            return cls(engine, run_id, problem=f"the task's image could not be prepared: {exc}")

    def grade(self, app_dir: Path | None, *, harbor_reward: float | None = None) -> Regrade:
        started = time.monotonic()
        if self.problem or self.task is None:
            return ungraded(self.problem or "not prepared", harbor_reward, started)
        submission = collected(app_dir, harbor_reward, started)
        if isinstance(submission, Regrade):
            return submission
        try:
            scored = self.task.grade(self.engine, submission, run_id=self.run_id)
        except InfraError as exc:
            return ungraded(exc.message, harbor_reward, started, logs=exc.log)
        if scored.reward is None:
            why = scored.problem or "the verifier gave no reward"
            return ungraded(why, harbor_reward, started, logs=scored.logs)
        return Regrade(
            scored.reward,
            TrialStatus.GRADED,
            harbor_reward,
            dict(scored.detail),
            scored.logs,
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
