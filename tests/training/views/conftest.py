"""A behaviour with two kept tasks, an oracle that repaired one and a bluffer that only claimed
to fix the other, and a finished eval run over both."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.training.factories import claimed_only, make_behaviour, repaired
from tests.training.views.helpers import make_recorded_rollout
from training.services.evals import eval_run_create, eval_run_execute


@pytest.fixture
def evaluated(people):
    behaviour = make_behaviour(tasks=2)
    first, second = (t.candidate for t in behaviour.tasks.order_by("id"))
    good = make_recorded_rollout(first, repaired(), agent="oracle", reward=1.0)
    bluff = make_recorded_rollout(second, claimed_only(), agent="bluffer", reward=0.0)
    run = eval_run_create(user=people.bob, behaviour_id=behaviour.pk)
    run = eval_run_execute(run_id=run.pk)
    return SimpleNamespace(
        behaviour=behaviour,
        good=good,
        bluff=bluff,
        run=run,
        good_result=run.results.get(rollout=good),
        bluff_result=run.results.get(rollout=bluff),
    )
