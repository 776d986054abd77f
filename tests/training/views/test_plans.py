"""The training plan pages: a form validated by the core with every problem named at 422, and a
plan's page with its markdown rendered (escaped) and both files to download."""

from __future__ import annotations

import pytest
import yaml

from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail
from training.models import TrainingExport, TrainingPlan
from training.services.exports import training_export_create, training_export_execute

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def export(people, tmp_path):
    behaviour = behaviour_with(train=1, held_out=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    training_export_create(  # queued, never written: not a snapshot to plan on
        user=people.bob, behaviour_id=behaviour.pk, kind="dpo", out_dir=tmp_path / "d"
    )
    row = training_export_create(
        user=people.bob, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "s"
    )
    done = training_export_execute(export_id=row.pk)
    assert done.status == TrainingExport.Status.DONE
    return done


def form(export, **overrides) -> dict:
    return {
        "export": export.pk,
        "method": "sft",
        "base_model": "Qwen/Qwen2.5-Coder-7B-Instruct",
        "adapter": "qlora",
        "lora_rank": 16,
        "lora_alpha": 32,
        "lora_dropout": 0.05,
        "target_modules": "q_proj k_proj v_proj o_proj",
        "compute_dtype": "bfloat16",
        "min_pass_rate": 0.8,
        "max_regression": 0,
        "gpu_hours": 10,
        "money": 30,
        "currency": "eur",
    } | overrides


def test_the_form_offers_written_exports_only(client, people, export):
    client.force_login(people.bob)
    for headers in ({}, HX):
        html = client.get(f"/training/plans/new/?export={export.pk}", headers=headers)
        text = html.content.decode()
        assert html.status_code == 200 and "Save the plan" in text
        assert f'<option value="{export.pk}" selected>' in text
    queued = TrainingExport.objects.exclude(pk=export.pk).get()
    assert f'<option value="{queued.pk}"' not in text


def test_a_plan_is_saved_and_shown_as_rendered_markdown_with_downloads(client, people, export):
    client.force_login(people.bob)
    response = client.post("/training/plans/new/", form(export))
    plan = TrainingPlan.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/training/plans/{plan.pk}/"
    html = client.get(response["Location"]).content.decode()
    assert "<h1>Agent RL Sandbox Training Spec" in html and "<h2>Eval gate</h2>" in html
    assert "4-bit NF4" in html and plan.held_out_task_ids[0] in html
    config = yaml.safe_load(client.get(f"/training/plans/{plan.pk}/plan.yaml").content)
    assert config["load_in_4bit"] is True and config["dataset_name"] == export.out_dir
    markdown = client.get(f"/training/plans/{plan.pk}/plan.md")
    assert markdown["Content-Disposition"].startswith("attachment;")
    assert markdown.content.decode().startswith("# Agent RL Sandbox Training Spec")
    assert f'id="training-plan-{plan.pk}"' in client.get("/training/plans/").content.decode()


def test_every_problem_of_a_plan_is_named_at_422_keeping_the_form(client, people, export):
    client.force_login(people.dave)
    response = client.post(
        "/training/plans/new/", form(export, method="dpo", lora_rank=0, money=-5)
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert "The plan cannot be trained as written" in html
    assert "dpo trains on a DPO export, not sft" in html
    assert "LoRA rank 0 is outside 1..1024" in html and "the money cap cannot be negative" in html
    assert 'value="Qwen/Qwen2.5-Coder-7B-Instruct"' in html
    typed = client.post("/training/plans/new/", form(export, gpu_hours="lots"))
    assert typed.status_code == 422 and "Enter a number." in typed.content.decode()
    assert not TrainingPlan.objects.exists()


def test_text_a_user_typed_is_escaped_in_the_rendered_plan(client, people, export):
    client.force_login(people.bob)
    client.post("/training/plans/new/", form(export, base_model="<img src=x onerror=alert(1)>"))
    plan = TrainingPlan.objects.get()
    html = client.get(f"/training/plans/{plan.pk}/").content.decode()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_plans_are_for_reviewers_and_admins(client, people, export):
    for who in (people.alice, people.carol):
        client.force_login(who)
        assert client.get("/training/plans/").status_code == 403
        assert client.post("/training/plans/new/", form(export)).status_code == 403
