"""`manage.py training_plan_write`: a plan on a written export, made as the plan form makes it,
written to plan.md and plan.yaml; exit 0 written, 1 refused, 2 a usage error."""

from __future__ import annotations

import pytest
import yaml

from tests.training.factories.loop import written_export
from training.models import TrainingPlan

pytestmark = pytest.mark.django_db


@pytest.fixture
def export(people, tmp_path):
    return written_export(people.bob, tmp_path / "sft")


NEW = ("--method", "sft", "--base-model", "Qwen/Qwen2.5-Coder-7B-Instruct", "--gpu-hours", "8",
       "--money", "50")  # fmt: skip


def test_a_plan_on_an_export_folder_is_written_as_markdown_and_trl_config(manage, export, tmp_path):
    out = tmp_path / "plan"
    ran = manage(
        "training_plan_write", "--export", export.out_dir, *NEW, "--lora-rank", "8",
        "--out", str(out), "--as", "bob", "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    row = TrainingPlan.objects.get()
    assert row.created_by.username == "bob" and row.lora_rank == 8
    assert ran.json == {
        "plan": row.pk,
        "behaviour": export.behaviour.slug,
        "method": "sft",
        "files": [str(out / "plan.md"), str(out / "plan.yaml")],
    }
    config = yaml.safe_load((out / "plan.yaml").read_text())
    assert config["dataset_name"] == export.out_dir and config["lora_r"] == 8
    markdown = (out / "plan.md").read_text()
    assert "trl sft --config plan.yaml" in markdown and export.sha256 in markdown
    again = tmp_path / "again"
    ran = manage("training_plan_write", "--plan", str(row.pk), "--out", str(again), "--as", "bob")
    assert ran.code == 0 and (again / "plan.yaml").read_text() == (out / "plan.yaml").read_text()


def test_someone_without_the_plan_role_is_refused_with_1(manage, export, tmp_path):
    out = tmp_path / "plan"
    ran = manage(
        "training_plan_write", "--export", str(export.pk), *NEW, "--out", str(out), "--as", "alice"
    )
    assert ran.code == 1 and "write training plans" in ran.err
    assert not out.exists() and not TrainingPlan.objects.exists()


def test_usage_errors_exit_2_naming_what_is_wrong(manage, export, tmp_path):
    out = str(tmp_path / "plan")
    cases = [
        (("--export", export.out_dir, "--method", "sft"), "a new plan needs --base-model"),
        (("--export", str(tmp_path / "nowhere"), *NEW), "no written training export"),
        (("--export", export.out_dir, *NEW, "--lora-rank", "0"), "rank"),
        (
            ("--export", export.out_dir, *NEW, "--adapter", "qlora", "--dtype", "f8"),
            "f8 is not one of",
        ),
        (("--plan", "999"), "no training plan 999"),
    ]
    for args, message in cases:
        ran = manage("training_plan_write", *args, "--out", out, "--as", "bob")
        assert ran.code == 2 and message in ran.err, (args, ran.err)
    assert manage("training_plan_write", "--plan", "1", "--out", out).code == 2  # no --as
    (tmp_path / "plan").mkdir()
    (tmp_path / "plan" / "plan.md").write_text("mine")
    ran = manage(
        "training_plan_write", "--export", export.out_dir, *NEW, "--out", out, "--as", "bob"
    )
    assert ran.code == 2 and "already holds plan.md" in ran.err
