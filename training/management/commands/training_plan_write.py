"""`manage.py training_plan_write --export DIR_OR_ID --method M --base-model MODEL --gpu-hours H
--money X --out DIR --as USERNAME [--json]`: a training plan on a written export, as the plan
form makes it, written to files: ``plan.md`` (the trainer seed's template, with the command to
run) and ``plan.yaml`` (the config ``trl <method> --config plan.yaml`` reads).

``--plan ID`` writes the files of a plan made before (on the page) instead. Exit 0 written; 1
refused (the role); 2 a usage error: an unknown export, plan or user, settings the plan rules
refuse (every problem named), or files already in DIR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.core.plans import PlanError, render_markdown, render_trl_config
from training.management.loop_commands import Done, LoopCommand, export_named, usage_error
from training.models import TrainingPlan
from training.services.plans import plan_of, training_plan_create

FILES = ("plan.md", "plan.yaml")
# The service's keyword arguments this command passes on when given (its defaults otherwise).
OPTIONAL = (
    "adapter",
    "lora_rank",
    "lora_alpha",
    "lora_dropout",
    "target_modules",
    "compute_dtype",
    "min_pass_rate",
    "max_regression",
    "currency",
)


class Command(LoopCommand):
    help = "Make a training plan on a written export and write plan.md and plan.yaml."
    person = "required"

    def add_step_arguments(self, parser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--export", metavar="DIR_OR_ID", help="a written export's folder or id")
        which.add_argument("--plan", type=int, metavar="ID", help="write an existing plan's files")
        parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="where to write")
        parser.add_argument("--method", choices=TrainingPlan.Method.values)
        parser.add_argument("--base-model", metavar="MODEL", help="e.g. Qwen/Qwen2.5-Coder-7B")
        parser.add_argument("--gpu-hours", type=float, metavar="H", help="the budget's GPU hours")
        parser.add_argument("--money", type=float, metavar="X", help="the budget's money cap")
        parser.add_argument("--currency", help="the money's currency (default USD)")
        parser.add_argument("--adapter", choices=TrainingPlan.Adapter.values)
        parser.add_argument("--lora-rank", type=int)
        parser.add_argument("--lora-alpha", type=int)
        parser.add_argument("--lora-dropout", type=float)
        parser.add_argument("--target-modules", nargs="+", metavar="MODULE")
        # The plan rules check the value (and name the choices): one list, in the core.
        parser.add_argument(
            "--dtype",
            dest="compute_dtype",
            metavar="DTYPE",
            help="bfloat16 (default), float16 or float32",
        )
        parser.add_argument("--min-pass-rate", type=float, help="on the held-out tasks, 0 to 1")
        parser.add_argument("--max-regression", type=float, help="below the base agent, 0 to 1")

    def step(self, *, user, out: Path, **options: Any) -> Done:
        out = out.expanduser().resolve()
        taken = [name for name in FILES if (out / name).exists()]
        if taken:
            raise usage_error(f"{out} already holds {', '.join(taken)}; choose another folder")
        row = _plan(options["plan"]) if options["plan"] else _create(user, options)
        try:
            plan = plan_of(row)
        except PlanError as error:  # stored before a rule changed
            problems = "; ".join(error.problems)
            raise usage_error(f"plan {row.pk} no longer holds: {problems}") from None
        out.mkdir(parents=True, exist_ok=True)
        (out / "plan.md").write_text(render_markdown(plan), encoding="utf-8")
        (out / "plan.yaml").write_text(render_trl_config(plan), encoding="utf-8")
        written = [str(out / name) for name in FILES]
        payload = {"plan": row.pk, "behaviour": row.behaviour.slug, "method": row.method}
        return Done({**payload, "files": written}, "\n".join(written))


def _plan(pk: int) -> TrainingPlan:
    row = TrainingPlan.objects.select_related("behaviour", "version", "export").filter(pk=pk)
    if not row.exists():
        raise usage_error(f"no training plan {pk}")
    return row.get()


def _create(user: Any, options: dict[str, Any]) -> TrainingPlan:
    needed = ("method", "base_model", "gpu_hours", "money")
    missing = [f"--{name.replace('_', '-')}" for name in needed if options[name] is None]
    if missing:
        raise usage_error(f"a new plan needs {', '.join(missing)}")
    given = {name: options[name] for name in OPTIONAL if options[name] is not None}
    return training_plan_create(
        user=user,
        export_id=export_named(options["export"]).pk,
        method=options["method"],
        base_model=options["base_model"],
        gpu_hours=options["gpu_hours"],
        money=options["money"],
        **given,
    )
