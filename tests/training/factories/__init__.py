"""Rows for the training floor's tests: behaviours on kept tasks and rollouts with their facts.

The rest of the floor's factories, by subject: ``loop`` (rollouts with real trajectories, evals,
exports), ``deploy`` (held-out behaviours, adapters, gated worlds, deployments) and
``deploy_states`` (the deploy core's plain dataclasses in a given state, no rows).
"""

from __future__ import annotations

import itertools

from tasks_review.core.trials.version import VERIFIER_VERSION
from tasks_review.models import Candidate
from tests.tasks_review.factories import make_candidate
from tests.training.core.helpers import Session
from training.core.catalogue import catalogue
from training.models import Behaviour, Rollout
from training.services.behaviours import behaviour_create, behaviour_tasks_add

_seq = itertools.count(1)


def loop_candidate(**fields) -> Candidate:
    """A kept task the loop may use: kept by the current verifier and accepted on the desk."""
    fields.setdefault("review_status", Candidate.ReviewStatus.ACCEPTED)
    fields.setdefault("verifier_version", VERIFIER_VERSION)
    return make_candidate(trials=False, **fields)


def make_behaviour(slug: str = "failing-test-repair", tasks: int = 0) -> Behaviour:
    behaviour = behaviour_create(user=None, spec=catalogue()[slug].to_dict())
    if tasks:
        candidates = [loop_candidate() for _ in range(tasks)]
        behaviour_tasks_add(
            user=None, behaviour_id=behaviour.pk, candidate_ids=[c.pk for c in candidates]
        )
    return behaviour


def repaired(session: Session | None = None) -> Session:
    """A failing-test repair done right: the test fails, the code is fixed, the test passes."""
    s = session or Session()
    s.run("pytest tests/test_invoice.py", output="1 failed", exit_code=1)
    s.read("invoice.py", "def total():\n    return 0\n")
    s.edit("invoice.py", "return 0", "return 1")
    s.run("pytest tests/test_invoice.py", output="1 passed")
    return s.say("Fixed: the test passes now.")


def claimed_only() -> Session:
    """Says it fixed the bug; never ran a test after touching anything."""
    s = Session()
    s.read("invoice.py", "def total():\n    return 0\n")
    s.edit("invoice.py", "return 0", "return 1")
    return s.say("Done, all tests pass.")


def make_rollout(
    candidate: Candidate,
    session: Session,
    *,
    agent: str = "claude-code",
    reward: float | None = 1.0,
    grade: str = Rollout.Grade.GRADED,
    **fields,
) -> Rollout:
    return Rollout.objects.create(
        candidate=candidate,
        trial_name=f"{candidate.task_name}__{next(_seq)}",
        agent=agent,
        reward=reward,
        grade=grade,
        facts=session.facts().to_dict(),
        **fields,
    )
