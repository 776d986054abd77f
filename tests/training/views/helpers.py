"""Rows for the training pages' tests: rollouts whose trajectory is stored, so that a result
links into the replay stepper at the very steps the harness scored."""

from __future__ import annotations

from tasks_review.models import Candidate
from tests.training.core.helpers import Session
from tests.training.factories import make_rollout
from tests.trajectories.factories import make_trajectory
from training.models import Rollout


def recorded_steps(session: Session) -> list[dict]:
    """The ATIF steps the session's facts are computed from (its closing message included)."""
    atif, _side = session.builder.build()
    steps = atif["steps"]
    if session.closing:
        steps.append({"step_id": len(steps) + 1, "source": "agent", "message": session.closing})
    return steps


def make_recorded_rollout(candidate: Candidate, session: Session, **fields) -> Rollout:
    trajectory = make_trajectory(
        steps=recorded_steps(session), title=f"{fields.get('agent', 'agent')} on {candidate}"
    )
    return make_rollout(candidate, session, trajectory=trajectory, **fields)
