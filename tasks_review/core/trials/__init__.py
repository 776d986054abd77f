"""The trial layer: a Harbor task folder proven (or not) sound in Docker. No Django here.

    from tasks_review.core.docker import Engine
    from tasks_review.core.trials import prepare, check_in_image, run_matrix

    engine = Engine.from_env()
    prepared = prepare(task_dir, engine)            # image built once, cached by content
    result = run_matrix(prepared, engine=engine, run_id="run-42")   # checks in the image first
    result.status                                   # kept / rejected / dropped / ungraded
    [t.to_dict() for t in result.trials]            # role, repeat, reward, status, timings ...

``verify_task(task_dir, run_id=...)`` does all three and turns an unreachable daemon or a
failed build into an ungraded result. ``run_matrices(prepared, jobs=2, ...)`` runs several
candidates in parallel. The tampering controls are ``CATALOGUE`` in ``controls``; the
separate verifier is ``verifier``; the reward rules are ``results``.
"""

from .controls import CATALOGUE, Control, ControlContext
from .deps import Dependency, OfflineSources, declared_dependencies, npm_satisfies, unavailable
from .matrix import (
    Baseline,
    Cancelled,
    PreparedTask,
    check_in_image,
    decide,
    prepare,
    run_matrices,
    run_matrix,
    run_trial,
    verify_task,
)
from .model import (
    MatrixResult,
    MatrixStatus,
    Role,
    TrialDrop,
    TrialDropReason,
    TrialRecord,
    TrialStatus,
)
from .plan import GradingPlan, is_guarded, plan_check
from .results import CaseResult, RunnerReport, Verdict, judge, parse_junit, parse_unittest_json
from .taskdir import TaskFolderError, TaskSpec, read_task

__all__ = [
    "CATALOGUE",
    "Baseline",
    "Cancelled",
    "CaseResult",
    "Control",
    "ControlContext",
    "Dependency",
    "GradingPlan",
    "MatrixResult",
    "MatrixStatus",
    "OfflineSources",
    "PreparedTask",
    "Role",
    "RunnerReport",
    "TaskFolderError",
    "TaskSpec",
    "TrialDrop",
    "TrialDropReason",
    "TrialRecord",
    "TrialStatus",
    "Verdict",
    "check_in_image",
    "declared_dependencies",
    "decide",
    "is_guarded",
    "judge",
    "npm_satisfies",
    "parse_junit",
    "parse_unittest_json",
    "plan_check",
    "prepare",
    "read_task",
    "run_matrices",
    "run_matrix",
    "run_trial",
    "unavailable",
    "verify_task",
]
