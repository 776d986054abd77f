"""Training plans: what to train, on which snapshot, with which adapter, behind which gate and
budget; rendered as the trainer seed's training spec (markdown) and as a config for TRL's
command line, which a user runs on their own GPUs.

>>> plan = TrainingPlan(
...     behaviour="run-tests-first", spec_version=3,
...     statement="Run the focused failing test before editing code.",
...     method=Method.DPO,
...     dataset=DatasetSnapshot("exp-4", "ab" * 32, "exports/exp-4", ExportKind.DPO),
...     base_model="Qwen/Qwen2.5-Coder-7B-Instruct",
...     adapter=LoraSettings(rank=16, alpha=32, dropout=0.05,
...                          target_modules=("q_proj", "k_proj", "v_proj", "o_proj")),
...     quantization=QLoRA(),
...     held_out_task_ids=("calc-add", "calc-sub"),
...     gate=PromotionGate(min_pass_rate=0.8),
...     budget=Budget(gpu_hours=12, money=40, currency="USD"),
... )
>>> print(render_trl_config(plan).split("\\n\\n")[1])  # doctest: +NORMALIZE_WHITESPACE
model_name_or_path: Qwen/Qwen2.5-Coder-7B-Instruct
dataset_name: exports/exp-4
dataset_train_split: train
>>> "4-bit NF4" in render_markdown(plan)
True

The config's keys are TRL's own (its ``ModelConfig``: ``use_peft``, ``lora_r``, ``lora_alpha``,
``lora_dropout``, ``lora_target_modules``, ``load_in_4bit``, ``bnb_4bit_quant_type``,
``use_bnb_nested_quant``, and ``dtype``, the dtype the base model loads in, always written since
TRL's default is float32, which TRL also passes as the 4-bit compute dtype; older TRL releases
call it ``torch_dtype``), used as ``trl dpo --config plan.yaml``
(https://huggingface.co/docs/trl/clis).

Checks TRL makes only once the GPUs are allocated are made here too: KTO's trainer refuses a
per-device batch of 1 (its KL estimate pairs each example with another of the same batch), so a
KTO plan defaults to 2. ``gradient_checkpointing`` stays: it is the name transformers'
``TrainingArguments`` reads; its warning about ``activation_checkpointing`` concerns FSDP full
sharding only, where that key belongs in ``fsdp_config`` (``plan.md`` says so).

The seed's template ("Agent RL Sandbox Training Spec") is reconstructed from the seed text: the
behaviour, the sandbox, a reward from artifacts, the data, the adapter, held-out eval gates,
budget caps and unhooks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import yaml

from training.core.exports.items import ExportKind
from trajectories.core.words import with_article


class Method(StrEnum):
    SFT = "sft"
    DPO = "dpo"
    KTO = "kto"
    GRPO = "grpo"  # reinforcement fine-tuning against the kept tasks' verifiers


# The export kind each method trains on.
METHOD_DATA = {
    Method.SFT: ExportKind.SFT,
    Method.DPO: ExportKind.DPO,
    Method.KTO: ExportKind.KTO,
    Method.GRPO: ExportKind.RFT,
}

DTYPES = ("bfloat16", "float16", "float32")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class PlanError(ValueError):
    """A plan that cannot be trained as written; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class DatasetSnapshot:
    export_id: str
    sha256: str  # of the export's manifest.json, which names every data file's sha256
    path: str  # where the trainer finds it: the export folder, or a Hub dataset id
    kind: ExportKind


@dataclass(frozen=True)
class LoraSettings:
    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")


@dataclass(frozen=True)
class QLoRA:
    """4-bit quantisation of the frozen base model under the LoRA adapter (its compute dtype is
    the plan's ``dtype``: TRL passes one setting as both)."""

    quant_type: str = "nf4"
    double_quant: bool = True


@dataclass(frozen=True)
class PromotionGate:
    """When the adapted agent may replace the base one: on the held-out tasks, at least this
    pass rate and no more than this drop against the base agent on the same tasks."""

    min_pass_rate: float
    max_regression: float = 0.0


@dataclass(frozen=True)
class Budget:
    gpu_hours: float
    money: float
    currency: str = "USD"


@dataclass(frozen=True)
class Hyperparameters:
    learning_rate: float = 2e-4  # LoRA's usual rate, about ten times full fine-tuning's
    num_train_epochs: float = 1.0
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 8  # with the batch, 8 examples per optimiser step
    max_length: int = 16384
    seed: int = 42
    beta: float = 0.1  # DPO and KTO
    num_generations: int = 8  # GRPO


@dataclass(frozen=True)
class TrainingPlan:
    behaviour: str
    spec_version: int
    statement: str  # the behaviour the base agent cannot perform reliably enough
    method: Method
    dataset: DatasetSnapshot
    base_model: str
    adapter: LoraSettings
    held_out_task_ids: tuple[str, ...]
    gate: PromotionGate
    budget: Budget
    quantization: QLoRA | None = None  # set: QLoRA; None: LoRA on the unquantised model
    dtype: str = "bfloat16"  # the base model's; with QLoRA also the 4-bit compute dtype
    hyperparameters: Hyperparameters | None = None  # None: the method's defaults
    output_dir: str = ""  # default: adapters/<behaviour>-<method>
    fixture: str = "each kept task's environment: a fresh one-commit repository, no network"
    allowed_tools: tuple[str, ...] = ()
    forbidden_actions: tuple[str, ...] = ()
    reward: str = "the task's verifier: its tests run on the world state, never the transcript"
    unhooks: tuple[str, ...] = (
        "kill switch: route every request to the base model at once",
        "rollback to the previous adapter version",
        "per-behaviour rollout percentage, starting small",
    )

    def __post_init__(self) -> None:
        if self.hyperparameters is None:
            object.__setattr__(self, "hyperparameters", default_hyperparameters(self.method))
        problems = _problems(self)
        if problems:
            raise PlanError(problems)

    @property
    def training(self) -> Hyperparameters:
        assert self.hyperparameters is not None  # set in __post_init__
        return self.hyperparameters

    @property
    def qlora(self) -> bool:
        return self.quantization is not None

    @property
    def out(self) -> str:
        return self.output_dir or f"adapters/{self.behaviour}-{self.method.value}"


def default_hyperparameters(method: Method) -> Hyperparameters:
    """The settings a plan trains with unless given: KTO needs two examples per device (the same
    eight per optimiser step), every other method fits one."""
    if method is Method.KTO:
        return Hyperparameters(per_device_train_batch_size=2, gradient_accumulation_steps=4)
    return Hyperparameters()


def _problems(plan: TrainingPlan) -> list[str]:
    p: list[str] = []
    if not _SLUG.match(plan.behaviour):
        p.append(f"behaviour {plan.behaviour!r} is not a slug")
    if plan.spec_version < 1:
        p.append("spec version must be 1 or more")
    if not plan.statement.strip():
        p.append("say which behaviour the base agent cannot perform reliably enough")
    if not plan.base_model.strip():
        p.append("no base model")
    d = plan.dataset
    if not d.export_id or not d.path:
        p.append("the dataset snapshot needs its export id and path")
    if not re.fullmatch(r"[0-9a-f]{64}", d.sha256):
        p.append("the dataset snapshot's sha256 must be 64 lowercase hex digits")
    if METHOD_DATA[plan.method] is not d.kind:
        wanted = with_article(METHOD_DATA[plan.method].value.upper())
        p.append(f"{plan.method.value} trains on {wanted} export, not {d.kind.value}")
    a = plan.adapter
    if not 1 <= a.rank <= 1024:
        p.append(f"LoRA rank {a.rank} is outside 1..1024")
    if a.alpha <= 0:
        p.append("LoRA alpha must be positive")
    if not 0 <= a.dropout < 1:
        p.append(f"LoRA dropout {a.dropout} is outside [0, 1)")
    if not a.target_modules:
        p.append("LoRA needs target modules")
    bad = [m for m in a.target_modules if m != "all-linear" and not _MODULE.match(m)]
    if bad or len(set(a.target_modules)) != len(a.target_modules):
        p.append(f"target modules must be distinct module names: {', '.join(bad) or 'repeated'}")
    q = plan.quantization
    if q is not None:
        if q.quant_type != "nf4":
            p.append(f"QLoRA quantises to 4-bit nf4, not {q.quant_type}")
        if not q.double_quant:
            p.append("QLoRA uses double quantisation")
    if plan.dtype not in DTYPES:
        p.append(f"dtype {plan.dtype} is not one of {', '.join(DTYPES)}")
    if not plan.held_out_task_ids:
        p.append("the promotion gate needs held-out tasks")
    if len(set(plan.held_out_task_ids)) != len(plan.held_out_task_ids):
        p.append("held-out task ids repeat")
    g = plan.gate
    if not 0 <= g.min_pass_rate <= 1 or not 0 <= g.max_regression <= 1:
        p.append("gate rates are fractions between 0 and 1")
    b = plan.budget
    if not (math.isfinite(b.gpu_hours) and b.gpu_hours > 0):
        p.append("the budget needs a positive GPU-hour cap")
    if not (math.isfinite(b.money) and b.money >= 0):
        p.append("the money cap cannot be negative")
    if not re.fullmatch(r"[A-Z]{3}", b.currency):
        p.append(f"currency {b.currency!r} is not an ISO code")
    h = plan.training
    if not (h.learning_rate > 0 and h.num_train_epochs > 0 and h.max_length > 0):
        p.append("learning rate, epochs and max length must be positive")
    if h.per_device_train_batch_size < 1 or h.gradient_accumulation_steps < 1:
        p.append("batch size and gradient accumulation must be at least 1")
    if plan.method is Method.KTO and h.per_device_train_batch_size < 2:
        p.append(
            "KTO needs a per-device batch of at least 2: TRL's KTO trainer pairs each example "
            "with another of the same batch for its KL estimate, and refuses a batch of 1"
        )
    if plan.method is Method.GRPO and h.num_generations < 2:
        p.append("GRPO compares at least 2 generations per prompt")
    return p


def _number(value: float) -> str:
    return f"{value:g}"


def trl_config(plan: TrainingPlan) -> dict[str, Any]:
    """The plan as TRL's script arguments, model config and trainer config, in one mapping."""
    h = plan.training
    config: dict[str, Any] = {
        "model_name_or_path": plan.base_model,
        "dataset_name": plan.dataset.path,
        "dataset_train_split": "train",
        "output_dir": plan.out,
        "use_peft": True,
        "lora_r": plan.adapter.rank,
        "lora_alpha": plan.adapter.alpha,
        "lora_dropout": plan.adapter.dropout,
        "lora_target_modules": list(plan.adapter.target_modules),
    }
    if plan.quantization is not None:
        config |= {
            "load_in_4bit": True,
            "bnb_4bit_quant_type": plan.quantization.quant_type,
            "use_bnb_nested_quant": plan.quantization.double_quant,
        }
    config["dtype"] = plan.dtype
    config |= {
        "learning_rate": h.learning_rate,
        "num_train_epochs": h.num_train_epochs,
        "per_device_train_batch_size": h.per_device_train_batch_size,
        "gradient_accumulation_steps": h.gradient_accumulation_steps,
        "gradient_checkpointing": True,
        "seed": h.seed,
        "report_to": "none",
    }
    if plan.method is Method.GRPO:
        config |= {"num_generations": h.num_generations, "max_completion_length": h.max_length}
    else:
        config["max_length"] = h.max_length
    if plan.method in (Method.DPO, Method.KTO):
        config["beta"] = h.beta
    return config


def _yaml(mapping: dict[str, Any]) -> str:
    return yaml.safe_dump(mapping, sort_keys=False, default_flow_style=False, allow_unicode=True)


def command(plan: TrainingPlan, config_file: str = "plan.yaml") -> str:
    if plan.method is Method.GRPO:
        return f"python train_grpo.py {config_file}"
    return f"trl {plan.method.value} --config {config_file}"


def render_trl_config(plan: TrainingPlan) -> str:
    """The config file for ``trl <method> --config``: provenance and caps as comments, then
    the model and data, the adapter, and the training arguments."""
    config = trl_config(plan)
    groups = [
        ["model_name_or_path", "dataset_name", "dataset_train_split"],
        [
            "use_peft",
            "lora_r",
            "lora_alpha",
            "lora_dropout",
            "lora_target_modules",
            "load_in_4bit",
            "bnb_4bit_quant_type",
            "use_bnb_nested_quant",
            "dtype",
        ],
    ]
    grouped = {key for group in groups for key in group}
    groups.append([key for key in config if key not in grouped])
    header = (
        f"# traj2env training plan: {plan.behaviour} v{plan.spec_version}, "
        f"{plan.method.value.upper()} with {'QLoRA' if plan.qlora else 'LoRA'}\n"
        f"# Dataset snapshot: export {plan.dataset.export_id}, "
        f"manifest sha256 {plan.dataset.sha256}\n"
        f"# Budget cap: {_number(plan.budget.gpu_hours)} GPU hours or "
        f"{_number(plan.budget.money)} {plan.budget.currency}, whichever comes first\n"
        f"# Run: {command(plan)}\n"
    )
    body = [_yaml({k: config[k] for k in group if k in config}) for group in groups]
    return header + "\n" + "\n".join(part for part in body if part.strip() != "{}")


def _bullets(items: tuple[str, ...] | list[str], empty: str, indent: str = "") -> str:
    return "\n".join(f"{indent}- {item}" for item in (items or [empty]))


_WHY = {
    Method.SFT: "behaviour cloning: the passing rollouts show the path to take consistently",
    Method.DPO: "preference: the reward is measurable but the path varies; pairs split where "
    "the rollouts diverge",
    Method.KTO: "unpaired preference: each rollout labelled by the eval harness's verdict",
    Method.GRPO: "reinforcement fine-tuning: the kept tasks' verifiers score fresh attempts",
}


def _grpo_script(plan: TrainingPlan) -> str:
    """GRPO with Harbor environments has no CLI entry point; this is the few lines TRL's own
    scripts use (its ModelConfig helpers build the LoRA and 4-bit settings from the same file)."""
    return (
        "```python\n"
        "# train_grpo.py: rollouts run in the kept tasks' sandboxes, rewarded by their verifiers\n"
        "import sys\n\n"
        "import yaml\n"
        "from trl import GRPOConfig, GRPOTrainer, ModelConfig\n"
        "from trl import get_peft_config, get_quantization_config\n"
        "from trl.experimental.harbor import HarborSpec\n\n"
        "config = yaml.safe_load(open(sys.argv[1]))\n\n\n"
        "def pick(cls):\n"
        "    return cls(**{k: v for k, v in config.items() if k in cls.__dataclass_fields__})\n\n\n"
        "model_args, args = pick(ModelConfig), pick(GRPOConfig)\n"
        "args.model_init_kwargs = {\n"
        '    "dtype": model_args.dtype,\n'
        '    "quantization_config": get_quantization_config(model_args),\n'
        "}\n"
        f'spec = HarborSpec("{plan.dataset.path}", agent="bash")\n'
        "trainer = GRPOTrainer(\n"
        "    model=model_args.model_name_or_path,\n"
        "    args=args,\n"
        "    train_dataset=spec.train_dataset,\n"
        "    environment_factory=spec.environment_factory,\n"
        "    reward_funcs=spec.reward_funcs,\n"
        "    peft_config=get_peft_config(model_args),\n"
        ")\n"
        "trainer.train()\n"
        "```\n"
    )


# GRPO's rollouts run in the kept tasks' own sandboxes on the training host, built from their
# Dockerfiles, which start FROM the desk's pinned base image: the host needs that image too.
_GRPO_NEEDS = (
    "This needs TRL's Harbor integration (`pip install 'trl[harbor]'`) and a Docker engine on "
    "the training host: each rollout runs in a kept task's container, built from the export's "
    "`environment/Dockerfile`. Those Dockerfiles start `FROM` the desk's pinned base image, "
    "which no public registry has. Bring it over once, with its digest:\n\n"
    "```sh\n"
    "python manage.py images export base-images.tar   # on the desk's host\n"
    "python manage.py images load base-images.tar     # on the training host\n"
    "```\n\n"
)
_FSDP = (
    "\nWith FSDP full sharding (`fsdp: full_shard`), set `gradient_checkpointing: false` and put "
    "`activation_checkpointing: true` in `fsdp_config` instead, as transformers advises: on one "
    "GPU or plain data parallelism, `gradient_checkpointing` is the setting.\n"
)


def render_markdown(plan: TrainingPlan) -> str:
    """The trainer seed's training-plan template, filled in."""
    a, q, g, b, d = plan.adapter, plan.quantization, plan.gate, plan.budget, plan.dataset
    adapter_lines = [
        f"- Base model: `{plan.base_model}` (frozen)",
        f"- Adapter: {'QLoRA' if q else 'LoRA'}, rank {a.rank}, alpha {a.alpha}, "
        f"dropout {_number(a.dropout)}",
        f"- Target modules: {', '.join(f'`{m}`' for m in a.target_modules)}",
    ]
    if q is not None:
        adapter_lines.append(
            f"- Quantisation: 4-bit {q.quant_type.upper()}, double quantisation "
            f"{'on' if q.double_quant else 'off'}, compute dtype {plan.dtype}"
        )
    else:
        adapter_lines.append(f"- Base model dtype: {plan.dtype}")
    h = plan.training
    adapter_lines.append(
        f"- Training: learning rate {_number(h.learning_rate)}, {_number(h.num_train_epochs)} "
        f"epoch(s), batch {h.per_device_train_batch_size} x {h.gradient_accumulation_steps} "
        f"accumulation, seed {h.seed}"
    )
    run = _grpo_script(plan) if plan.method is Method.GRPO else f"```sh\n{command(plan)}\n```\n"
    if plan.method is Method.GRPO:
        run = _GRPO_NEEDS + run
    run += _FSDP
    sections = [
        f"# Agent RL Sandbox Training Spec — {plan.behaviour} v{plan.spec_version}\n",
        f"{plan.statement.strip()}\n",
        "## Sandbox\n\n"
        f"- Repo/app state: {plan.fixture}\n"
        "- Allowed tools:\n"
        + _bullets(plan.allowed_tools, "as the behaviour spec allows", "  ")
        + "\n- Forbidden tools/actions:\n"
        + _bullets(plan.forbidden_actions, "none beyond the spec's", "  ")
        + "\n"
        "- Reset: every attempt starts from the task's pristine image\n",
        f"## Reward\n\nFrom artifacts, not prose: {plan.reward}.\n",
        "## Method\n\n"
        f"- {plan.method.value.upper()}: {_WHY[plan.method]}\n"
        "- Lighter interventions come first (rule, script, skill); train only when they do not "
        "pass the evals, as the behaviour's recorded decision says\n",
        "## Data\n\n"
        f"- Snapshot: export `{d.export_id}` ({d.kind.value}), manifest sha256 `{d.sha256}`\n"
        f"- Location: `{d.path}`\n"
        "- Redacted, copied context left out, no held-out task inside (see its manifest)\n",
        "## Adapter\n\n" + "\n".join(adapter_lines) + "\n",
        "## Eval gate\n\n"
        "- Held-out tasks:\n" + _bullets(sorted(plan.held_out_task_ids), "", "  ") + "\n"
        f"- Promote only if the adapted agent passes at least {g.min_pass_rate:.0%} of them "
        f"and falls at most {g.max_regression:.0%} below the base agent on the same tasks, "
        "both computed by the eval harness\n",
        "## Budget\n\n"
        f"- At most {_number(b.gpu_hours)} GPU hours and {_number(b.money)} {b.currency}; "
        "stop at whichever comes first\n",
        "## Unhooks\n\n" + _bullets(plan.unhooks, "none") + "\n",
        f"## Run\n\nOn your GPUs, with the config beside this file (`plan.yaml`):\n\n{run}",
    ]
    return "\n".join(sections)
