"""Decisions: what to do about a behaviour (prompt, script, train or human review), recorded with
its rationale and, attached here rather than typed in, the eval runs that were its evidence."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from groundwork.access.errors import Invalid, NotFound
from groundwork.services.audit import audit_event_record, require_audited
from trajectories.core import limits

from ..models import Behaviour, Decision, EvalRun
from ..roles import DECIDE

Kind = Decision.Kind


def _validated(kind: str, method: str, adapter: str, rationale: str) -> tuple[Kind, str, str]:
    try:
        chosen = Kind(kind)
    except ValueError:
        raise Invalid("choose what to do: prompt, script, train or human review") from None
    if not rationale.strip():
        raise Invalid("say why: a decision needs its rationale")
    problem = limits.refusal("the rationale", rationale.strip(), limits.COMMENT)
    if problem:
        raise Invalid(problem)
    if chosen == Kind.TRAIN:
        if method not in Decision.Method.values:
            raise Invalid("a train decision names its method: SFT, DPO, KTO or RFT")
        if adapter not in Decision.Adapter.values:
            raise Invalid("a train decision names its adapter: LoRA or QLoRA")
    elif method or adapter:
        raise Invalid(f"only a train decision has a method and an adapter, not {chosen.label}")
    return chosen, method, adapter


def evidence_runs(behaviour: Behaviour) -> list[int]:
    """The behaviour's finished eval runs (every version), oldest first: a decision's evidence."""
    return list(
        EvalRun.objects.filter(version__behaviour=behaviour, status=EvalRun.Status.DONE)
        .order_by("id")
        .values_list("id", flat=True)
    )


def decision_record(
    *,
    user: AbstractBaseUser,
    behaviour_id: int,
    kind: str,
    rationale: str,
    method: str = "",
    adapter: str = "",
) -> Decision:
    """Record a decision about the behaviour's latest version; earlier ones stay as history."""
    require_audited(
        user,
        DECIDE,
        "decide what to do about a behaviour",
        verb="behaviour.decide",
        target=Behaviour,
        target_id=behaviour_id,
    )
    chosen, method, adapter = _validated(kind, method, adapter, rationale)
    with transaction.atomic():
        behaviour = Behaviour.objects.select_for_update().filter(pk=behaviour_id).first()
        if behaviour is None:
            raise NotFound(f"behaviour {behaviour_id} does not exist")
        version = behaviour.latest_version()
        if version is None:
            raise Invalid(f"behaviour {behaviour.slug} has no spec version to decide about")
        previous = behaviour.decisions.order_by("-id").first()
        decision = Decision.objects.create(
            behaviour=behaviour,
            version=version,
            kind=chosen,
            method=method,
            adapter=adapter,
            rationale=rationale.strip(),
            evidence=evidence_runs(behaviour),
            decided_by=user,
        )
        audit_event_record(
            actor=user,
            verb="behaviour.decide",
            target=behaviour,
            before={"decision": previous.summary if previous else None},
            after={
                "decision_id": decision.pk,
                "decision": decision.summary,
                "version": version.number,
                "rationale": decision.rationale,
                "evidence": decision.evidence,
            },
        )
    return decision
