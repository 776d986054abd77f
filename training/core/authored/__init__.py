"""Authored tasks: Harbor task folders a user authors for a behaviour, kept only when the same
trial matrix as the mined tasks' passes (its own solution full reward, a no-op and every
tampering control 0), graded by the task's own ``tests/test.sh`` in a separate verifier.

    from training.core.authored import read_authored_task, verify_authored_task

    spec = read_authored_task("samples/authored/stop-when-credentials-missing")  # or ...Invalid
    result = verify_authored_task(spec.task_dir, run_id="authored-1")   # Docker, offline
    result.status, result.reasons, result.won                         # kept / rejected / ungraded
    TaskGrader.prepare(spec.task_dir, engine=engine, run_id="regrade-1", source=authored_task)

``folder`` reads and validates a task folder; ``solution`` wraps its solve.sh to leave its
trajectory under Harbor, as a mined task's does; ``matrix`` builds its image and runs its trials
through the mined tasks' one trial loop (``AuthoredTrial`` is what differs);
``verifier`` is Harbor's separate-verifier contract on the Docker seam; ``controls`` the
tampering catalogue. A rollout's collected project is graded again by the one grader,
``training.core.harbor.regrade.TaskGrader``, with ``authored_task`` as its source. No Django here.
"""

from .controls import CATALOGUE
from .folder import AuthoredSpec, AuthoredTaskInvalid, read_authored_task, unavailable_images
from .matrix import (
    AuthoredResult,
    AuthoredTrial,
    authored_task,
    prepare,
    run_matrix,
    verify_authored_task,
)
from .solution import record_solution
from .verifier import grade_app, read_rewards

__all__ = [
    "CATALOGUE",
    "AuthoredTrial",
    "AuthoredResult",
    "AuthoredSpec",
    "AuthoredTaskInvalid",
    "authored_task",
    "grade_app",
    "prepare",
    "read_rewards",
    "read_authored_task",
    "record_solution",
    "run_matrix",
    "unavailable_images",
    "verify_authored_task",
]
