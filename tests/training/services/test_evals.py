"""Eval runs score the graded rollouts of a behaviour's tasks from the world, not the transcript."""

from __future__ import annotations

import pytest

from groundwork.access.errors import Invalid, NotPermitted
from tests.training.factories import claimed_only, make_behaviour, make_rollout, repaired
from training.models import EvalResult, EvalRun, Rollout
from training.services.evals import eval_run_create, eval_run_execute

pytestmark = pytest.mark.django_db


def tasks_of(behaviour):
    return [t.candidate for t in behaviour.tasks.order_by("id")]


def test_a_real_repair_with_full_verified_reward_passes_and_a_claim_alone_scores_0(people):
    behaviour = make_behaviour(tasks=2)
    first, second = tasks_of(behaviour)
    good = make_rollout(first, repaired(), agent="oracle", reward=1.0)
    bluff = make_rollout(second, claimed_only(), agent="bluffer", reward=0.0)
    run = eval_run_execute(run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk).pk)
    assert run.status == EvalRun.Status.DONE and (run.done, run.total) == (2, 2)
    results = {r.rollout_id: r for r in EvalResult.objects.filter(run=run)}
    assert results[good.pk].passed and results[good.pk].reward == 1.0
    assert not results[bluff.pk].passed
    assert results[bluff.pk].reward == 0.0 and results[bluff.pk].self_report_only
    assert run.summary["passed"] == 1 and run.summary["gate_passed"] is False


def test_the_verified_reward_comes_from_the_rollout_row_not_the_transcript(people):
    behaviour = make_behaviour(tasks=1)
    (task,) = tasks_of(behaviour)
    # The same transcript, but the world says the fix did not hold.
    make_rollout(task, repaired(), reward=0.0)
    run = eval_run_execute(run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk).pk)
    result = EvalResult.objects.get(run=run)
    assert not result.passed
    assert "missed_evidence" in " ".join(result.detail["failure_modes"])


def test_ungraded_rollouts_are_not_scored_and_the_summary_says_so(people):
    behaviour = make_behaviour(tasks=1)
    (task,) = tasks_of(behaviour)
    make_rollout(task, repaired(), reward=None, grade=Rollout.Grade.UNGRADED)
    run = eval_run_execute(run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk).pk)
    assert run.total == 0 and run.summary["skipped_ungraded"] == 1
    assert run.summary["gate_passed"] is False  # nothing scored is never a pass
    assert any("not graded" in w for w in run.summary["warnings"])


def test_the_summary_groups_by_agent_and_split_with_pass_at_k(people):
    behaviour = make_behaviour(tasks=3)
    for task in tasks_of(behaviour):
        make_rollout(task, repaired(), agent="a", reward=1.0)
        make_rollout(task, claimed_only(), agent="a", reward=0.0)
        make_rollout(task, repaired(), agent="b", reward=1.0)
    run = eval_run_execute(
        run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk, k=2).pk
    )
    rows = {(g["agent"], g["split"]): g for g in run.summary["groups"]}
    assert {agent for agent, _ in rows} == {"a", "b"}
    for (agent, _split), group in rows.items():
        if agent == "a":
            assert group["pass_at_1"] == 0.5 and group["pass_at_k"] == 1.0
        else:
            assert group["pass_at_1"] == 1.0 and group["pass_at_k"] is None  # one rollout a task


def test_an_agent_filter_scores_only_that_agents_rollouts(people):
    behaviour = make_behaviour(tasks=1)
    (task,) = tasks_of(behaviour)
    make_rollout(task, repaired(), agent="oracle")
    make_rollout(task, claimed_only(), agent="nop", reward=0.0)
    run = eval_run_execute(
        run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk, agent="oracle").pk
    )
    assert run.total == 1 and run.summary["gate_passed"] is True


def test_a_run_is_claimed_once(people):
    behaviour = make_behaviour(tasks=1)
    run = eval_run_create(user=people.bob, behaviour_id=behaviour.pk)
    assert eval_run_execute(run_id=run.pk) is not None
    assert eval_run_execute(run_id=run.pk) is None


def test_starting_a_run_needs_the_role_and_a_sane_k(people):
    behaviour = make_behaviour()
    with pytest.raises(NotPermitted):
        eval_run_create(user=people.alice, behaviour_id=behaviour.pk)
    with pytest.raises(Invalid):
        eval_run_create(user=people.bob, behaviour_id=behaviour.pk, k=0)


def test_an_agent_name_over_its_column_is_refused_in_words(people):
    behaviour = make_behaviour()
    with pytest.raises(Invalid, match="agent is 204,800 characters long; at most 100"):
        eval_run_create(user=people.bob, behaviour_id=behaviour.pk, agent="a" * 204_800)
    assert not EvalRun.objects.exists()


def test_a_run_that_fails_records_why_in_words_not_an_exception_class(people, monkeypatch):
    behaviour = make_behaviour(tasks=1)
    run = eval_run_create(user=people.bob, behaviour_id=behaviour.pk)

    def broken(_run):
        raise KeyError("facts")

    monkeypatch.setattr("training.services.evals._score", broken)
    with pytest.raises(KeyError):
        eval_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == EvalRun.Status.FAILED
    assert run.error == "a required field is missing: 'facts'"
