"""Training plans on a written export: the held-out tasks come from the behaviour's split, every
problem is named, and the plan renders as the seed's markdown and as TRL's config."""

from __future__ import annotations

import pytest
import yaml

from groundwork.access.errors import Invalid, NotPermitted
from tests.training.loop_factories import behaviour_with, evaluated, pass_and_fail
from training.core.plans import render_markdown, render_trl_config
from training.models import BehaviourTask, TrainingExport
from training.services.exports import training_export_create, training_export_execute
from training.services.plans import PlanInvalid, plan_of, training_plan_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def export(people, tmp_path):
    behaviour = behaviour_with(train=1, held_out=2)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    row = training_export_create(
        user=people.bob, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "sft"
    )
    done = training_export_execute(export_id=row.pk)
    assert done.status == TrainingExport.Status.DONE
    return done


def plan(user, export, **overrides):
    fields = {
        "export_id": export.pk,
        "method": "sft",
        "base_model": "Qwen/Qwen2.5-Coder-7B-Instruct",
        "gpu_hours": 12,
        "money": 40,
    } | overrides
    return training_plan_create(user=user, **fields)


def test_a_plan_names_its_snapshot_and_the_behaviours_held_out_tasks(people, export):
    row = plan(people.bob, export)
    held_out = export.behaviour.tasks.filter(split=BehaviourTask.Split.HELD_OUT)
    assert row.held_out_task_ids == sorted(t.candidate.task_name for t in held_out)
    assert row.export_sha256 == export.sha256 and row.version == export.version
    markdown = render_markdown(plan_of(row))
    for task_id in row.held_out_task_ids:
        assert task_id in markdown
    assert export.sha256 in markdown and "## Eval gate" in markdown
    config = yaml.safe_load(render_trl_config(plan_of(row)))
    assert config["dataset_name"] == export.out_dir and config["lora_r"] == 16
    assert config["model_name_or_path"] == "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert "load_in_4bit" not in config


def test_a_qlora_plan_quantises_to_4_bit_nf4_with_double_quantisation(people, export):
    row = plan(people.dave, export, adapter="qlora", compute_dtype="float16", lora_rank=8)
    config = yaml.safe_load(render_trl_config(plan_of(row)))
    assert config["load_in_4bit"] is True and config["bnb_4bit_quant_type"] == "nf4"
    assert config["use_bnb_nested_quant"] is True and config["dtype"] == "float16"
    assert "4-bit NF4, double quantisation on" in render_markdown(plan_of(row))


def test_every_problem_of_a_plan_is_named(people, export):
    with pytest.raises(PlanInvalid) as refused:
        plan(people.bob, export, method="dpo", lora_rank=0, money=-1, base_model=" ")
    problems = refused.value.problems
    assert "no base model" in problems
    assert "dpo trains on a DPO export, not sft" in problems
    assert "LoRA rank 0 is outside 1..1024" in problems
    assert "the money cap cannot be negative" in problems


def test_a_behaviour_without_held_out_tasks_cannot_gate_a_plan(people, tmp_path):
    behaviour = behaviour_with(train=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    row = training_export_create(
        user=None, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "x"
    )
    training_export_execute(export_id=row.pk)
    with pytest.raises(PlanInvalid, match="the promotion gate needs held-out tasks"):
        plan(people.bob, row)


def test_a_plan_needs_a_written_export_and_the_plan_permission(people, export):
    refused = TrainingExport.objects.create(
        behaviour=export.behaviour,
        version=export.version,
        kind="sft",
        out_dir="/nowhere",
        status=TrainingExport.Status.REFUSED,
    )
    with pytest.raises(Invalid, match="a plan needs a written export"):
        plan(people.bob, refused)
    with pytest.raises(NotPermitted):
        plan(people.alice, export)
