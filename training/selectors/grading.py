"""Which kept tasks a behaviour's exports and gates may use, by how their rewards are decided.

A mined task is *equivalence-graded* when hidden probes decide its reward outside the graded
process (``tasks_review.core.trials.probeset``), *check-only* when its recorded check alone
does (or it was kept before verifier v3 said which). Check-only tasks count only for a
behaviour that opted in (``Behaviour.allow_check_only``); a task the user authored for a
behaviour (an authored task) is graded by the tests its author wrote, and counts as that.
Exports record the kinds they used in their manifest.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from tasks_review.models import Candidate

from ..models import Behaviour, BehaviourTask

AUTHORED = "authored"
CHECK_ONLY = Candidate.Grading.CHECK_ONLY.value
EQUIVALENCE = Candidate.Grading.EQUIVALENCE.value


def grading_of(candidate: Candidate) -> str:
    """How the task's reward is decided: equivalence, check-only or authored."""
    if not candidate.mined:
        return AUTHORED
    return EQUIVALENCE if candidate.grading == EQUIVALENCE else CHECK_ONLY


def allowed(behaviour: Behaviour, prefix: str = "candidate__") -> Q:
    """The tasks (as a filter on ``prefix``'s candidate) the behaviour may train and gate on."""
    counted = Q(**{f"{prefix}grading": EQUIVALENCE}) | Q(**{f"{prefix}family": Candidate.AUTHORED})
    return Q() if behaviour.allow_check_only else counted


def usable_tasks(behaviour: Behaviour, tasks: QuerySet[BehaviourTask]) -> QuerySet[BehaviourTask]:
    return tasks.filter(allowed(behaviour))


def grading_summary(behaviour: Behaviour, tasks: list[BehaviourTask]) -> dict[str, Any]:
    """For a manifest: the kinds the export used, and the check-only tasks it left out."""
    used = sorted({grading_of(t.candidate) for t in tasks if _counts(behaviour, t.candidate)})
    left = [t for t in tasks if not _counts(behaviour, t.candidate)]
    return {
        "used": used,
        "check_only_opt_in": behaviour.allow_check_only,
        "left_out_check_only": len(left),
    }


def _counts(behaviour: Behaviour, candidate: Candidate) -> bool:
    return behaviour.allow_check_only or grading_of(candidate) != CHECK_ONLY
