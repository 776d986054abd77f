"""The trial layer: a Harbor task folder proven (or not) sound in Docker. No Django here.

    from groundwork.core.docker import Engine
    from tasks_review.core.trials import prepare, check_in_image, run_matrix

    engine = Engine.from_env()
    prepared = prepare(task_dir, engine)            # image built once, cached by content
    result = run_matrix(prepared, engine=engine, run_id="run-42")   # checks in the image first
    result.status                                   # kept / rejected / dropped / ungraded
    [t.to_dict() for t in result.trials]            # role, repeat, reward, status, timings ...

``verify_task(task_dir, run_id=...)`` does all three and turns an unreachable daemon or a
failed build into an ungraded result. ``run_matrices(prepared, jobs=2, ...)`` runs several
candidates in parallel. The image is built and probed in ``image``, checked in ``baseline``;
the one trial loop (agent phase, verifier call, decision, pool) is ``runner``, which any
``TrialTask`` plugs into: a mined task is ``trial.MinedTrial``, the matrix of its trials
``matrix``. The tampering controls are ``CATALOGUE`` in ``controls`` (a module per family); the
separate verifier is ``verifier``; the reward rules are ``results`` (``kit/judging.py``; the
task's own grader is ``kit/grade.py``).
"""

from .baseline import Baseline, check_in_image
from .controls import CATALOGUE, Control, ControlContext
from .deps import Dependency, OfflineSources, declared_dependencies, unavailable
from .image import PreparedTask, prepare
from .matrix import run_matrices, run_matrix, verify_task
from .model import (
    MatrixResult,
    MatrixStatus,
    Role,
    TrialDrop,
    TrialDropReason,
    TrialRecord,
    TrialStatus,
)
from .npmrange import npm_satisfies
from .plan import GradingPlan, is_guarded, plan_check
from .results import Judgement, judge_graded_run, read_sessions
from .runner import (
    Cancelled,
    MatrixRun,
    Scored,
    TaskSource,
    TaskUnusable,
    TrialTask,
    decide,
    run_trial,
    run_trials,
)
from .taskdir import ReferenceFacts, TaskFolderError, TaskSpec, read_task
from .trial import MinedTrial, mined_task

__all__ = [
    "CATALOGUE",
    "Baseline",
    "Cancelled",
    "Control",
    "ControlContext",
    "Dependency",
    "GradingPlan",
    "MatrixResult",
    "MatrixRun",
    "MinedTrial",
    "MatrixStatus",
    "OfflineSources",
    "PreparedTask",
    "ReferenceFacts",
    "Scored",
    "Role",
    "TaskFolderError",
    "TaskSource",
    "TaskSpec",
    "TaskUnusable",
    "TrialDrop",
    "TrialDropReason",
    "TrialRecord",
    "TrialStatus",
    "TrialTask",
    "Judgement",
    "check_in_image",
    "declared_dependencies",
    "decide",
    "is_guarded",
    "judge_graded_run",
    "mined_task",
    "npm_satisfies",
    "plan_check",
    "prepare",
    "read_sessions",
    "read_task",
    "run_matrices",
    "run_matrix",
    "run_trial",
    "run_trials",
    "unavailable",
    "verify_task",
]
