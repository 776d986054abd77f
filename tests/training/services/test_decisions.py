"""Decisions per behaviour: prompt, script, train (with its method and adapter) or human review,
each with a rationale, the finished eval runs attached as evidence, kept as audited history."""

from __future__ import annotations

import pytest

from groundwork.access.errors import Invalid, NotPermitted
from groundwork.models import AuditEvent
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.models import Decision, EvalRun
from training.services.decisions import decision_record
from training.services.evals import eval_run_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def behaviour(people):
    behaviour = behaviour_with(train=1)
    pass_and_fail(tasks_of(behaviour)[0])
    return behaviour


def test_a_decision_attaches_the_finished_eval_runs_as_its_evidence(people, behaviour):
    first, second = evaluated(behaviour), evaluated(behaviour)
    queued = eval_run_create(user=None, behaviour_id=behaviour.pk)
    assert queued.status == EvalRun.Status.QUEUED
    decision = decision_record(
        user=people.bob,
        behaviour_id=behaviour.pk,
        kind="script",
        rationale="A hook refuses test edits; no training needed.",
    )
    assert decision.evidence == [first.pk, second.pk]
    assert decision.version == behaviour.latest_version()
    assert decision.decided_by == people.bob and decision.summary == "Script or hook"


def test_a_train_decision_names_its_method_and_adapter(people, behaviour):
    decision = decision_record(
        user=people.dave,
        behaviour_id=behaviour.pk,
        kind="train",
        method="dpo",
        adapter="qlora",
        rationale="The path varies; the reward is measurable.",
    )
    assert decision.summary == "Train: DPO with QLoRA"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "prompt", "rationale": "  "}, "needs its rationale"),
        ({"kind": "pray", "rationale": "why not"}, "prompt, script, train or human review"),
        ({"kind": "train", "rationale": "r", "adapter": "lora"}, "names its method"),
        ({"kind": "train", "rationale": "r", "method": "sft"}, "names its adapter"),
        ({"kind": "prompt", "rationale": "r", "method": "sft"}, "only a train decision"),
    ],
)
def test_a_decision_that_does_not_make_sense_is_refused_in_words(
    people, behaviour, fields, message
):
    with pytest.raises(Invalid, match=message):
        decision_record(user=people.bob, behaviour_id=behaviour.pk, **fields)
    assert not Decision.objects.exists()


def test_decisions_are_history_each_one_audited_against_the_one_before(people, behaviour):
    first = decision_record(
        user=people.bob, behaviour_id=behaviour.pk, kind="prompt", rationale="Try a rule first."
    )
    decision_record(
        user=people.dave,
        behaviour_id=behaviour.pk,
        kind="human_review",
        rationale="The rule did not move the evals.",
    )
    assert [d.kind for d in behaviour.decisions.all()] == ["human_review", "prompt"]
    events = AuditEvent.objects.filter(verb="behaviour.decide").order_by("id")
    assert [e.before["decision"] for e in events] == [None, "Prompt"]
    assert events[1].after["decision"] == "Human review"
    assert events[1].after["rationale"] == "The rule did not move the evals."
    assert events[1].target_id == str(behaviour.pk) and events[1].actor == people.dave
    first.rationale = "rewritten"
    with pytest.raises(PermissionError):
        first.save()


def test_only_reviewers_and_admins_decide(people, behaviour):
    for who in (people.alice, people.carol, people.eve):
        with pytest.raises(NotPermitted):
            decision_record(user=who, behaviour_id=behaviour.pk, kind="prompt", rationale="r")


def test_a_200_kb_rationale_is_refused_in_words_not_stored_or_cut(people, behaviour):
    with pytest.raises(Invalid, match="rationale is 204,800 characters long; at most 10,000"):
        decision_record(
            user=people.bob, behaviour_id=behaviour.pk, kind="prompt", rationale="r" * 204_800
        )
    assert not Decision.objects.exists()


def test_a_rationale_holding_a_nul_character_is_refused_in_words_not_stored(people, behaviour):
    # PostgreSQL stores no NUL in a text column: it was a 500 there.
    with pytest.raises(Invalid, match="rationale holds a NUL character"):
        decision_record(
            user=people.bob, behaviour_id=behaviour.pk, kind="prompt", rationale="r\x00"
        )
    assert not Decision.objects.exists()
