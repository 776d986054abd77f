"""Training plans: validated, rendered as the seed's training spec and as a TRL config,
deterministically, with QLoRA's settings only where QLoRA is asked for."""

from __future__ import annotations

import ast
import dataclasses
import doctest

import pytest
import yaml

from training.core import plans as plans_module
from training.core.exports import ExportKind
from training.core.plans import (
    Budget,
    DatasetSnapshot,
    Hyperparameters,
    LoraSettings,
    Method,
    PlanError,
    PromotionGate,
    QLoRA,
    TrainingPlan,
    command,
    render_markdown,
    render_trl_config,
)

SHA = "0123456789abcdef" * 4
KIND = {
    Method.SFT: ExportKind.SFT,
    Method.DPO: ExportKind.DPO,
    Method.KTO: ExportKind.KTO,
    Method.GRPO: ExportKind.RFT,
}

# The argument names TRL's command line reads from a config file, by the dataclass that holds
# them: ScriptArguments, ModelConfig (https://huggingface.co/docs/trl/clis), transformers'
# TrainingArguments, and each trainer's own config.
TRL_SCRIPT = {"dataset_name", "dataset_train_split"}
TRL_MODEL = {
    "model_name_or_path",
    "dtype",
    "use_peft",
    "lora_r",
    "lora_alpha",
    "lora_dropout",
    "lora_target_modules",
    "load_in_4bit",
    "bnb_4bit_quant_type",
    "use_bnb_nested_quant",
}
TRAINING = {
    "output_dir",
    "learning_rate",
    "num_train_epochs",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "gradient_checkpointing",
    "seed",
    "report_to",
}
TRAINER = {
    Method.SFT: {"max_length"},
    Method.DPO: {"max_length", "beta"},
    Method.KTO: {"max_length", "beta"},
    Method.GRPO: {"num_generations", "max_completion_length"},
}
QLORA_KEYS = {"load_in_4bit", "bnb_4bit_quant_type", "use_bnb_nested_quant"}


def plan(method: Method = Method.DPO, qlora: bool = True, **changes) -> TrainingPlan:
    base = dict(
        behaviour="run-tests-first",
        spec_version=3,
        statement="Run the focused failing test before editing code.",
        method=method,
        dataset=DatasetSnapshot("exp-4", SHA, "exports/exp-4", KIND[method]),
        base_model="Qwen/Qwen2.5-Coder-7B-Instruct",
        adapter=LoraSettings(rank=32, alpha=64, dropout=0.1, target_modules=("q_proj", "v_proj")),
        quantization=QLoRA() if qlora else None,
        held_out_task_ids=("calc-sub", "calc-add"),
        gate=PromotionGate(min_pass_rate=0.8, max_regression=0.0),
        budget=Budget(gpu_hours=12, money=40.5, currency="EUR"),
        allowed_tools=("Bash", "Read", "Edit"),
        forbidden_actions=("edit files under tests/",),
    )
    base.update(changes)
    return TrainingPlan(**base)


@pytest.mark.parametrize("method", list(Method))
def test_rendering_is_deterministic(method):
    assert render_markdown(plan(method)) == render_markdown(plan(method))
    assert render_trl_config(plan(method)) == render_trl_config(plan(method))
    reordered = plan(method, held_out_task_ids=("calc-add", "calc-sub"))
    assert render_markdown(reordered) == render_markdown(plan(method))


@pytest.mark.parametrize("method", list(Method))
def test_the_config_holds_only_trls_own_argument_names(method):
    config = yaml.safe_load(render_trl_config(plan(method)))
    assert set(config) <= TRL_SCRIPT | TRL_MODEL | TRAINING | TRAINER[method]
    assert TRAINER[method] <= set(config)
    assert config["model_name_or_path"] == "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert config["dataset_name"] == "exports/exp-4"
    assert (config["use_peft"], config["lora_r"], config["lora_alpha"], config["lora_dropout"]) == (
        True,
        32,
        64,
        0.1,
    )
    assert config["lora_target_modules"] == ["q_proj", "v_proj"]
    assert config["output_dir"] == f"adapters/run-tests-first-{method.value}"


def test_qlora_settings_appear_only_for_qlora():
    qlora = yaml.safe_load(render_trl_config(plan(qlora=True)))
    assert {k: qlora[k] for k in QLORA_KEYS} == {
        "load_in_4bit": True,
        "bnb_4bit_quant_type": "nf4",
        "use_bnb_nested_quant": True,
    }
    lora = yaml.safe_load(render_trl_config(plan(qlora=False)))
    assert not QLORA_KEYS & set(lora)
    assert "Quantisation: 4-bit NF4, double quantisation on, compute dtype bfloat16" in (
        render_markdown(plan(qlora=True))
    )
    assert "Quantisation" not in render_markdown(plan(qlora=False))
    assert "Adapter: LoRA, rank 32" in render_markdown(plan(qlora=False))


def test_the_markdown_fills_the_seeds_training_spec():
    text = render_markdown(plan())
    assert text.startswith("# Agent RL Sandbox Training Spec — run-tests-first v3\n")
    for heading in (
        "Sandbox",
        "Reward",
        "Method",
        "Data",
        "Adapter",
        "Eval gate",
        "Budget",
        "Unhooks",
        "Run",
    ):
        assert f"\n## {heading}\n" in text
    assert "- Repo/app state: " in text
    assert "  - Bash\n  - Read\n  - Edit\n" in text and "  - edit files under tests/\n" in text
    assert f"manifest sha256 `{SHA}`" in text
    assert "  - calc-add\n  - calc-sub\n" in text
    assert "passes at least 80% of them and falls at most 0% below the base agent" in text
    assert "At most 12 GPU hours and 40.5 EUR" in text
    assert "kill switch" in text
    assert "trl dpo --config plan.yaml" in text


def test_the_config_names_its_snapshot_budget_and_command():
    header = render_trl_config(plan(Method.KTO, qlora=False)).split("\n\n")[0]
    assert f"manifest sha256 {SHA}" in header
    assert "12 GPU hours or 40.5 EUR" in header
    assert "# Run: trl kto --config plan.yaml" in header


def test_grpo_runs_through_trls_harbor_integration_with_a_script_that_parses():
    p = plan(Method.GRPO, hyperparameters=Hyperparameters(num_generations=4))
    assert command(p) == "python train_grpo.py plan.yaml"
    config = yaml.safe_load(render_trl_config(p))
    assert config["num_generations"] == 4 and "max_length" not in config
    text = render_markdown(p)
    script = text.split("```python\n", 1)[1].split("```", 1)[0]
    ast.parse(script)
    assert 'HarborSpec("exports/exp-4"' in script and "get_quantization_config" in script


BAD = {
    "rank 0": dict(adapter=LoraSettings(rank=0)),
    "rank too large": dict(adapter=LoraSettings(rank=4096)),
    "alpha": dict(adapter=LoraSettings(alpha=0)),
    "dropout": dict(adapter=LoraSettings(dropout=1.0)),
    "no target modules": dict(adapter=LoraSettings(target_modules=())),
    "odd module name": dict(adapter=LoraSettings(target_modules=("q_proj; rm -rf",))),
    "fp4": dict(quantization=QLoRA(quant_type="fp4")),
    "no double quant": dict(quantization=QLoRA(double_quant=False)),
    "dtype": dict(dtype="int8"),
    "sha256": dict(dataset=DatasetSnapshot("exp-4", "xyz", "exports/exp-4", ExportKind.DPO)),
    "wrong export kind": dict(dataset=DatasetSnapshot("exp-4", SHA, "e", ExportKind.SFT)),
    "no held-out tasks": dict(held_out_task_ids=()),
    "repeated held-out": dict(held_out_task_ids=("a", "a")),
    "gate rate": dict(gate=PromotionGate(min_pass_rate=1.5)),
    "gpu hours": dict(budget=Budget(gpu_hours=0, money=1)),
    "money": dict(budget=Budget(gpu_hours=1, money=-1)),
    "currency": dict(budget=Budget(gpu_hours=1, money=1, currency="euro")),
    "no base model": dict(base_model=" "),
    "behaviour slug": dict(behaviour="Run Tests"),
    "no statement": dict(statement=""),
    "learning rate": dict(hyperparameters=Hyperparameters(learning_rate=0)),
}


@pytest.mark.parametrize("changes", BAD.values(), ids=BAD.keys())
def test_bad_settings_are_refused(changes):
    with pytest.raises(PlanError) as refused:
        plan(**changes)
    assert len(refused.value.problems) == 1


def test_every_problem_is_named_at_once():
    with pytest.raises(PlanError) as refused:
        plan(adapter=LoraSettings(rank=0, dropout=2), budget=Budget(gpu_hours=-1, money=1))
    assert len(refused.value.problems) == 3
    assert "LoRA rank 0" in str(refused.value) and "GPU-hour" in str(refused.value)


def test_grpo_needs_a_group_to_compare():
    with pytest.raises(PlanError, match="at least 2 generations"):
        plan(Method.GRPO, hyperparameters=Hyperparameters(num_generations=1))


def test_a_plan_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan().base_model = "other"  # type: ignore[misc]


def test_the_module_docstring_example_runs():
    failures, tried = doctest.testmod(plans_module, report=False)
    assert tried > 0 and failures == 0


def test_kto_defaults_to_a_batch_trl_kto_accepts():
    # TRL's KTOTrainer refuses a per-device batch of 1: its KL estimate pairs each example with
    # another one from the same batch.
    config = yaml.safe_load(render_trl_config(plan(Method.KTO)))
    assert config["per_device_train_batch_size"] >= 2


def test_a_kto_batch_of_one_is_refused_as_trl_kto_refuses_it():
    with pytest.raises(PlanError, match="KTO needs a per-device batch of at least 2"):
        plan(Method.KTO, hyperparameters=Hyperparameters(per_device_train_batch_size=1))


@pytest.mark.parametrize("method", [Method.SFT, Method.DPO, Method.GRPO])
def test_other_methods_keep_a_batch_of_one(method):
    config = yaml.safe_load(render_trl_config(plan(method)))
    assert config["per_device_train_batch_size"] == 1


@pytest.mark.parametrize("qlora", [True, False])
def test_the_model_dtype_is_written_bfloat16_by_default_rather_than_trls_float32(qlora):
    config = yaml.safe_load(render_trl_config(plan(qlora=qlora)))
    assert config["dtype"] == "bfloat16"


def test_the_model_dtype_is_configurable_and_checked():
    config = yaml.safe_load(render_trl_config(plan(qlora=False, dtype="float16")))
    assert config["dtype"] == "float16"
    with pytest.raises(PlanError, match="dtype int8"):
        plan(dtype="int8")


def test_gradient_checkpointing_is_the_training_argument_and_fsdp_gets_its_own_key():
    # transformers' TrainingArguments has no activation_checkpointing field (strict TrlParser
    # refuses unknown keys); its warning is about FSDP, whose fsdp_config takes that key.
    config = yaml.safe_load(render_trl_config(plan()))
    assert config["gradient_checkpointing"] is True and "activation_checkpointing" not in config
    text = render_markdown(plan())
    assert "`fsdp_config`" in text and "`activation_checkpointing: true`" in text
    assert "`gradient_checkpointing: false`" in text


def test_grpo_plan_says_it_needs_trl_harbor_a_docker_engine_and_the_base_image():
    text = render_markdown(plan(Method.GRPO))
    assert "pip install 'trl[harbor]'" in text
    assert "Docker engine" in text
    assert "manage.py images export base-images.tar" in text
    assert "manage.py images load base-images.tar" in text
    assert "trl[harbor]" not in render_markdown(plan(Method.DPO))
