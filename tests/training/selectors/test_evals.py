"""Reads behind the eval pages: the verdict in a sentence, the groups table, the results
filters and each expectation's step."""

from __future__ import annotations

import pytest

from tests.training.factories import make_behaviour
from tests.training.views.helpers import make_evaluated
from training.models import EvalRun
from training.selectors import evals as reads
from training.services.evals import eval_run_create

pytestmark = pytest.mark.django_db


def group(agent: str, split: str, **extra) -> dict:
    return {
        "agent": agent,
        "model": None,
        "adapter": None,
        "prompt_version": None,
        "split": split,
        **extra,
    }


def test_the_verdict_says_why_in_a_sentence(people):
    behaviour = make_behaviour(tasks=1)
    run = eval_run_create(user=people.bob, behaviour_id=behaviour.pk)
    assert reads.verdict(run) == reads.EvalVerdict(None, "queued: no verdict yet")
    run.status = EvalRun.Status.DONE
    run.summary = {"rollouts": 0, "gate_passed": False}
    assert reads.verdict(run).why.startswith("nothing was scored")
    run.summary = {"rollouts": 3, "failed": 0, "gate_passed": True}
    assert reads.verdict(run) == reads.EvalVerdict(True, "all 3 scored rollouts passed")
    run.summary = {"rollouts": 3, "failed": 2, "gate_passed": False}
    assert reads.verdict(run) == reads.EvalVerdict(False, "2 of 3 scored rollouts failed")
    run.status, run.error = EvalRun.Status.FAILED, "boom"
    assert reads.verdict(run) == reads.EvalVerdict(False, "the run itself failed: boom")


def test_groups_sort_by_agent_then_train_before_held_out_and_show_models_only_when_named():
    run = EvalRun(
        k=3,
        summary={
            "groups": [
                group("b", "train"),
                group("a", "held_out"),
                group("a", "train"),
            ]
        },
    )
    table = reads.group_table(run)
    assert [(g["agent"], g["split"]) for g in table.rows] == [
        ("a", "train"),
        ("a", "held_out"),
        ("b", "train"),
    ]
    assert table.rows[1]["split_label"] == "Held-out"
    assert table.rows[1]["query"] == "agent=a&split=held_out"
    assert (table.k, table.show_model, table.show_adapter, table.show_prompt) == (
        3,
        False,
        False,
        False,
    )
    run.summary["groups"].append(group("c", "train", model="gpt-x", adapter="lora-7"))
    table = reads.group_table(run)
    assert table.show_model and table.show_adapter and not table.show_prompt


def test_result_filters_ignore_values_they_do_not_know():
    filters = reads.ResultFilters.from_query({"split": "test", "outcome": "maybe", "agent": " a "})
    assert filters == reads.ResultFilters(agent="a") and filters.query() == "agent=a"
    assert not reads.ResultFilters.from_query({}).active


def test_items_give_the_matched_step_or_else_the_nearest(people):
    evaluated = make_evaluated(people.bob)
    items = reads.result_items(evaluated.bluff_result)
    by_label = {item.label: item for item in items}
    edit = by_label["edit the code"]
    assert (edit.section, edit.ok, edit.step, edit.exact) == ("action", True, 1, True)
    reward = by_label["verified reward at least 1"]
    assert (reward.section, reward.ok, reward.of_world) == ("evidence", False, True)
    assert not by_label["test check passed after the last edit"].of_world
    for raw in evaluated.bluff_result.detail["actions"] + evaluated.bluff_result.detail["evidence"]:
        item = by_label[raw["label"]]
        expected = raw["step"] if raw["step"] is not None else raw["near_step"]
        assert item.step == expected and item.exact == (raw["step"] is not None)
    assert reads.result_agents(evaluated.run) == ["bluffer", "oracle"]


def test_a_forbidden_hit_is_an_item_at_its_step_in_words():
    from training.models import EvalResult

    result = EvalResult(
        detail={
            "forbidden_hits": [
                {"name": "force_push", "step": 4, "event": 9, "detail": "git push -f origin main"},
            ]
        }
    )
    (item,) = reads.result_items(result)
    assert (item.section, item.label, item.ok, item.step, item.note) == (
        "forbidden",
        "Force pushes",
        False,
        4,
        "git push -f origin main",
    )
