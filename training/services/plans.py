"""Training plans: a finished export (the dataset snapshot) and the settings a user chooses,
validated by ``training.core.plans`` with every problem named; the held-out tasks are the
behaviour's own held-out split, never typed in."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from groundwork.access.errors import Invalid, NotFound, require
from groundwork.services.audit import audit_event_record
from training.core.exports import ExportKind
from training.core.plans import (
    Budget,
    DatasetSnapshot,
    LoraSettings,
    Method,
    PlanError,
    PromotionGate,
    QLoRA,
    TrainingPlan,
)
from trajectories.core.limits import echo

from ..models import Behaviour, BehaviourTask, TrainingExport
from ..models import TrainingPlan as PlanRow
from ..roles import PLAN
from ..selectors.exports import export_staleness, task_id_of


class PlanInvalid(Invalid):
    """A plan the core refuses; ``problems`` lists every reason."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


def held_out_ids(behaviour: Behaviour) -> list[str]:
    tasks = behaviour.tasks.filter(split=BehaviourTask.Split.HELD_OUT).select_related("candidate")
    return sorted(task_id_of(t.candidate) for t in tasks)


def plan_of(row: PlanRow) -> TrainingPlan:
    """The stored plan as the core renders it (raising PlanError if it no longer holds)."""
    spec = row.version.spec
    export = row.export
    return TrainingPlan(
        behaviour=row.behaviour.slug,
        spec_version=row.version.number,
        statement=spec.get("description") or spec.get("title") or row.behaviour.title,
        method=Method(row.method),
        dataset=DatasetSnapshot(
            str(export.pk), row.export_sha256, export.out_dir, ExportKind(export.kind)
        ),
        base_model=row.base_model,
        adapter=LoraSettings(
            rank=row.lora_rank,
            alpha=row.lora_alpha,
            dropout=row.lora_dropout,
            target_modules=tuple(row.target_modules),
        ),
        quantization=QLoRA() if row.adapter == PlanRow.Adapter.QLORA else None,
        dtype=row.compute_dtype,
        held_out_task_ids=tuple(row.held_out_task_ids),
        gate=PromotionGate(min_pass_rate=row.min_pass_rate, max_regression=row.max_regression),
        budget=Budget(gpu_hours=row.gpu_hours, money=row.money, currency=row.currency),
        forbidden_actions=tuple(f["name"] for f in spec.get("forbidden", [])),
    )


def training_plan_create(
    *,
    user: AbstractBaseUser,
    export_id: int,
    method: str,
    base_model: str,
    adapter: str = PlanRow.Adapter.LORA,
    lora_rank: int = 16,
    lora_alpha: int = 32,
    lora_dropout: float = 0.05,
    target_modules: Sequence[str] = ("q_proj", "k_proj", "v_proj", "o_proj"),
    compute_dtype: str = "bfloat16",
    min_pass_rate: float = 0.8,
    max_regression: float = 0.0,
    gpu_hours: float,
    money: float,
    currency: str = "USD",
) -> PlanRow:
    """A plan on a finished export of a behaviour, for its version of the spec."""
    require(user, PLAN, "write training plans")
    export = TrainingExport.objects.select_related("behaviour", "version").filter(pk=export_id)
    snapshot = export.first()
    if snapshot is None:
        raise NotFound(f"training export {export_id} does not exist")
    if snapshot.status != TrainingExport.Status.DONE:
        raise Invalid(f"export {snapshot.pk} is {snapshot.status}: a plan needs a written export")
    stale = export_staleness(snapshot)
    if stale:
        raise Invalid(f"export {snapshot.pk} is stale: {stale}; export again and plan on that")
    if method not in PlanRow.Method.values:
        raise Invalid(f"unknown method {echo(method)}: choose SFT, DPO, KTO or RFT / GRPO")
    if adapter not in PlanRow.Adapter.values:
        raise Invalid(f"unknown adapter {echo(adapter)}: choose LoRA or QLoRA")
    row = PlanRow(
        behaviour=snapshot.behaviour,
        version=snapshot.version,
        method=method,
        export=snapshot,
        export_sha256=snapshot.sha256,
        base_model=base_model.strip(),
        adapter=adapter,
        lora_rank=lora_rank,
        lora_alpha=lora_alpha,
        lora_dropout=lora_dropout,
        target_modules=[m.strip() for m in target_modules if m.strip()],
        compute_dtype=compute_dtype,
        held_out_task_ids=held_out_ids(snapshot.behaviour),
        min_pass_rate=min_pass_rate,
        max_regression=max_regression,
        gpu_hours=gpu_hours,
        money=money,
        currency=currency.strip().upper(),
        created_by=user,
    )
    try:
        plan_of(row)
    except PlanError as error:
        raise PlanInvalid(error.problems) from None
    with transaction.atomic():
        row.save()
        audit_event_record(
            actor=user,
            verb="training_plan.create",
            target=row,
            before=None,
            after={
                "behaviour": row.behaviour.slug,
                "method": row.method,
                "export": snapshot.pk,
                "export_sha256": row.export_sha256,
                "base_model": row.base_model,
                "adapter": row.adapter,
            },
        )
    return row
