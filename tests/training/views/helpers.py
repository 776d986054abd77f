"""Rows for the training pages' tests: rollouts whose trajectory is stored, so that a result
links into the replay stepper at the very steps the harness scored."""

from __future__ import annotations

from types import SimpleNamespace

from tasks_review.models import Candidate
from tests.training.core.helpers import Session
from tests.training.factories import claimed_only, make_behaviour, make_rollout, repaired
from tests.trajectories.factories import make_trajectory
from training.models import Rollout
from training.services.evals import eval_run_create, eval_run_execute


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


def make_evaluated(user) -> SimpleNamespace:
    """A behaviour with two kept tasks, an oracle that repaired one and a bluffer that only
    claimed to fix the other, both recorded, and a finished eval run over both."""
    behaviour = make_behaviour(tasks=2)
    first, second = (t.candidate for t in behaviour.tasks.order_by("id"))
    good = make_recorded_rollout(first, repaired(), agent="oracle", reward=1.0)
    bluff = make_recorded_rollout(second, claimed_only(), agent="bluffer", reward=0.0)
    run = eval_run_execute(run_id=eval_run_create(user=user, behaviour_id=behaviour.pk).pk)
    assert run is not None
    return SimpleNamespace(
        behaviour=behaviour,
        good=good,
        bluff=bluff,
        run=run,
        good_result=run.results.get(rollout=good),
        bluff_result=run.results.get(rollout=bluff),
    )
