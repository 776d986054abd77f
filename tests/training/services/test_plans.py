"""Training plans on a written export: the held-out tasks come from the behaviour's split, every
problem is named, and the plan renders as the seed's markdown and as TRL's config."""

from __future__ import annotations

import pytest
import yaml

from groundwork.access.errors import Invalid, NotPermitted
from tasks_review.models import Candidate
from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail
from training.core.plans import render_markdown, render_trl_config
from training.models import BehaviourTask, Rollout, TrainingExport
from training.selectors.exports import export_staleness
from training.services.behaviours import behaviour_version_create
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


def test_an_export_whose_inputs_changed_is_stale_and_refuses_a_plan(people, export):
    assert export_staleness(export) is None
    rollout = Rollout.objects.get(pk=int(export.manifest["sources"][0]["trajectory_id"]))
    Rollout.objects.filter(pk=rollout.pk).update(reward=0.0)  # re-graded since the export
    assert "its inputs changed since it was written" in export_staleness(export)
    with pytest.raises(Invalid, match=f"export {export.pk} is stale"):
        plan(people.bob, export)
    Rollout.objects.filter(pk=rollout.pk).update(reward=rollout.reward)
    assert export_staleness(export) is None


def test_a_review_verdict_after_the_export_makes_it_stale(people, export):
    task = export.behaviour.tasks.get(split=BehaviourTask.Split.TRAIN)
    Candidate.objects.filter(pk=task.candidate_id).update(
        review_status=Candidate.ReviewStatus.NEEDS_FIX
    )
    assert export_staleness(export)
    with pytest.raises(Invalid, match="stale"):
        plan(people.bob, export)


def test_a_new_behaviour_version_makes_the_export_stale(people, export):
    spec = {**export.version.spec, "title": "Repair a failing test, v2"}
    behaviour_version_create(user=people.bob, behaviour_id=export.behaviour_id, spec=spec)
    assert "has version 2 since (it was v1)" in export_staleness(export)
