"""Deployments: propose, approve on a gate recomputed now, drill, activate, change a rollout,
kill, roll back, retire.

Every action is one core transition (``training.core.deploy.states``) in one transaction: lock
the deployment row, build the core's view of it, call the transition, write the fields that
changed and the audit event. The core's refusals come out as this floor's typed errors with the
core's words. Drills span three steps by design: the kill commits first, so that the route
endpoint, reading committed rows like any serving request, is asked while it is really killed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from groundwork.access.errors import Conflict, Invalid, NotFound, NotPermitted, require
from groundwork.services.audit import audit_event_record, iso, require_audited
from training.core.deploy import states
from training.core.deploy.bucketing import format_percentage, subject_inside
from training.core.deploy.budget import BudgetCap, BudgetError
from training.core.deploy.gate import loosened, strictest
from trajectories.core import limits

from ..models import Adapter, ApiClient, Behaviour, Deployment, DeploymentApproval, DeploymentShare
from ..roles import APPROVE_DEPLOYMENT, OPERATE_DEPLOYMENT, PROPOSE_DEPLOYMENT
from ..selectors.deploy import deployment_core, gate_floor, gate_report, route_answer


@contextmanager
def refusals() -> Iterator[None]:
    """The core's refusals as the floor's errors, so views map one family to 403/409/422."""
    try:
        yield
    except states.NotAllowed as error:
        raise NotPermitted(error.message) from None
    except states.InvalidRequest as error:
        raise Invalid(error.message) from None
    except states.Conflict as error:
        raise Conflict(error.message) from None


def deployment_propose(
    *,
    user: AbstractBaseUser,
    adapter_id: int,
    percentages: Mapping[str, int],
    min_rollouts: int | None = None,
    min_pass_rate: Decimal | None = None,
    tolerance: Decimal | None = None,
    tokens_per_day: int | None = None,
    money_per_day: Decimal | None = None,
    salt: str = "",
) -> Deployment:
    """A proposed deployment of the adapter at ``percentages`` (basis points per behaviour
    slug), gated by the thresholds given (the defaults otherwise) and capped per UTC day."""
    require(user, PROPOSE_DEPLOYMENT, "propose deployments")
    adapter = Adapter.objects.select_related("behaviour", "registered_by").filter(pk=adapter_id)
    row = adapter.first()
    if row is None:
        raise NotFound(f"adapter {adapter_id} does not exist")
    deployment = Deployment(
        adapter=row,
        proposed_by=user,
        tokens_per_day=tokens_per_day,
        money_per_day=money_per_day,
        salt=salt.strip(),
    )
    if min_rollouts is not None:
        deployment.min_rollouts = min_rollouts
    if min_pass_rate is not None:
        deployment.min_pass_rate = min_pass_rate
    if tolerance is not None:
        deployment.tolerance = tolerance
    try:
        looser = loosened(deployment.thresholds(), gate_floor())
        if deployment.has_budget:
            BudgetCap(tokens_per_day=tokens_per_day, money_per_day=money_per_day)
    except (ValueError, BudgetError) as error:
        raise Invalid(str(error)) from None
    if looser:
        raise Invalid(
            f"the gate's floors ask for {'; '.join(looser)}: a proposal may only tighten them"
        )
    with refusals():
        proposal = states.propose(
            row.core(), proposer=user.get_username(), percentages=dict(percentages)
        )
    behaviours = _behaviours(proposal.requested)
    with transaction.atomic():
        deployment.save()
        DeploymentShare.objects.bulk_create(
            DeploymentShare(deployment=deployment, behaviour=behaviours[slug], requested=bp)
            for slug, bp in proposal.requested.items()
        )
        audit_event_record(
            actor=user,
            verb="deployment.propose",
            target=deployment,
            before=None,
            after={
                "adapter": row.key,
                "requested": _percent_map(proposal.requested),
                "gate": deployment.thresholds().to_dict(),
                "budget": {
                    "tokens_per_day": tokens_per_day,
                    "money_per_day": _money(money_per_day),
                },
            },
        )
    return deployment


def deployment_approve(
    *, user: AbstractBaseUser, deployment_id: int, percentages: Mapping[str, int] | None = None
) -> Deployment:
    """Approve on the gate recomputed now (stored with the approval), then drill the kill
    switch: unhooks are validated, not declared."""
    _require(user, APPROVE_DEPLOYMENT, "approve deployments", "deployment.approve", deployment_id)
    row = _get(deployment_id)
    # The proposal's thresholds, never looser than the floors as they are now.
    report = gate_report(row.adapter, strictest(row.thresholds(), gate_floor()))
    now = timezone.now()

    def approve(d: states.Deployment) -> states.Deployment:
        return states.approve(
            d,
            verdict=report.verdict,
            approver=user.get_username(),
            is_approver=holds_by_role(user, APPROVE_DEPLOYMENT),
            at=now,
            percentages=percentages,
        )

    def record(row: Deployment, after: states.Deployment) -> dict[str, Any]:
        assert after.approval is not None
        DeploymentApproval.objects.create(
            deployment=row,
            approver=user,
            at=now,
            ceiling=dict(after.approval.ceiling),
            # What counted for neither side is part of what the approver saw.
            gate={**report.verdict.to_dict(), "unattributed": report.unattributed},
            summary=report.verdict.summary(),
        )
        return {"ceiling": _percent_map(after.approval.ceiling), "gate": report.verdict.summary()}

    _transition(user, deployment_id, "deployment.approve", approve, record)
    return _drill(user, deployment_id)


def deployment_drill(*, user: AbstractBaseUser | None, deployment_id: int) -> Deployment:
    """Kill the deployment (committed), ask the route endpoint's own code, as far as this
    deployment goes, about a subject inside each rollout, and restore the deployment only if
    every answer was the base model."""
    if user is not None:
        _require(user, OPERATE_DEPLOYMENT, "drill deployments", "deployment.drill", deployment_id)
    return _drill(user, deployment_id)


def _drill(user: AbstractBaseUser | None, deployment_id: int) -> Deployment:
    # Also the step that follows an approval, an activation or a rollback, on behalf of whoever
    # did that: it needs no permission of its own.
    row = _transition(
        user, deployment_id, "deployment.drill_start", lambda d: states.start_drill(d, at=_now())
    )
    answers = {
        behaviour: route_answer(behaviour, subject, deployment=row.pk)
        for behaviour, subject in _drill_subjects(row).items()
    }
    answered_at = _now()
    # One answer still naming an adapter fails the drill; otherwise any answer speaks for all.
    seen = next(
        (a for a in answers.values() if a.adapter is not None), next(iter(answers.values()))
    )

    def restore(d: states.Deployment) -> states.Deployment:
        if d.pending_drill is None and d.state is states.State.KILLED:
            # Someone pulled the kill switch during the drill: it stays killed, as they asked.
            raise Conflict(f"deployment {d.ref} was killed during its drill; it stays killed")
        return states.restore_after_drill(d, answer=seen, at=answered_at)

    def record(row: Deployment, after: states.Deployment) -> dict[str, Any]:
        return {
            "passed": after.drilled,
            "answers": {b: a.to_dict() for b, a in sorted(answers.items())},
            "answered_at": iso(answered_at),
        }

    return _transition(user, deployment_id, "deployment.drill", restore, record)


def deployment_activate(
    *, user: AbstractBaseUser, deployment_id: int, percentages: Mapping[str, int] | None = None
) -> Deployment:
    """Serve the approved, drilled deployment (superseding earlier versions of its adapter),
    then drill it again while it is live: the one drill that tests a serving route."""
    _require(user, OPERATE_DEPLOYMENT, "activate deployments", "deployment.activate", deployment_id)
    with transaction.atomic():
        row = locked_deployment(deployment_id)
        d = deployment_core(row)
        others = _locked_active(exclude=row.pk)
        with refusals():
            activation = states.activate(
                d, active=[deployment_core(o) for o in others], percentages=percentages
            )
        for other in others:
            after = next((s for s in activation.superseded if s.ref == str(other.pk)), None)
            if after is not None:
                record_transition(
                    user, other, deployment_core(other), after, "deployment.supersede"
                )
        record_transition(user, row, d, activation.deployment, "deployment.activate")
    return _drill(user, deployment_id)


def deployment_percentage_set(
    *, user: AbstractBaseUser, deployment_id: int, behaviour: str, basis_points: int
) -> Deployment:
    """Move an active rollout within its approval; above it needs a new approval."""
    _require(
        user,
        OPERATE_DEPLOYMENT,
        "change rollout percentages",
        "deployment.percentage",
        deployment_id,
    )

    def change(d: states.Deployment) -> states.Deployment:
        if basis_points and behaviour not in d.percentages:
            served = _served_elsewhere(behaviour, exclude=int(d.ref))
            if served is not None:
                raise Conflict(
                    f"{behaviour} is served by deployment {served.pk} ({served.adapter}); "
                    "retire or kill it first"
                )
        return states.set_percentage(d, behaviour=behaviour, basis_points=basis_points)

    return _transition(user, deployment_id, "deployment.percentage", change)


def deployment_kill(
    *,
    user: AbstractBaseUser | None = None,
    client: ApiClient | None = None,
    deployment_id: int,
    reason: str,
) -> Deployment:
    """The kill switch: from now on the route answers the base model. Needs no approval; a
    person needs the operate permission, an API client only its token."""
    if client is None and user is not None:
        _require(user, OPERATE_DEPLOYMENT, "kill deployments", "deployment.kill", deployment_id)
    extra = {"api_client": client.name} if client is not None else {}
    return _transition(
        user,
        deployment_id,
        "deployment.kill",
        lambda d: states.kill(d, reason=limits.storable(reason).strip()),
        lambda row, after: extra,
    )


def deployment_rollback(*, user: AbstractBaseUser, deployment_id: int, reason: str) -> Deployment:
    """Take the deployment out as rolled back and re-activate the version it replaced; then
    drill that one. Returns the re-activated deployment."""
    _require(
        user, OPERATE_DEPLOYMENT, "roll back deployments", "deployment.rollback", deployment_id
    )
    _refuse_long(reason)
    with transaction.atomic():
        row = locked_deployment(deployment_id)
        d = deployment_core(row)
        history = list(Deployment.objects.select_for_update().filter(superseded_by=row))
        cores = {str(h.pk): deployment_core(h) for h in history}
        with refusals():
            previous = states.previous_approved(d, cores.values())
            result = states.rollback(d, previous=previous, reason=reason.strip())
        target = next(h for h in history if str(h.pk) == result.reactivated.ref)
        record_transition(user, row, d, result.rolled_back, "deployment.rollback")
        record_transition(
            user, target, cores[str(target.pk)], result.reactivated, "deployment.reactivate"
        )
    return _drill(user, target.pk)


def deployment_retire(*, user: AbstractBaseUser, deployment_id: int, reason: str) -> Deployment:
    _require(user, OPERATE_DEPLOYMENT, "retire deployments", "deployment.retire", deployment_id)
    _refuse_long(reason)
    return _transition(
        user, deployment_id, "deployment.retire", lambda d: states.retire(d, reason=reason.strip())
    )


def _refuse_long(reason: str) -> None:
    """A reason over the limit is refused, not cut. A kill's is not checked: the kill switch
    works whatever its request says."""
    problem = limits.refusal("the reason", reason.strip(), limits.COMMENT)
    if problem:
        raise Invalid(problem)


def holds_by_role(user: AbstractBaseUser, perm: str) -> bool:
    """Whether ``user`` holds ``perm`` through a role (a group) or a grant of their own; being a
    superuser is neither: role rules bind superusers too, so an admin cannot approve."""
    app_label, codename = perm.split(".", 1)
    held = Permission.objects.filter(content_type__app_label=app_label, codename=codename)
    return bool(user.is_active) and held.filter(Q(group__user=user) | Q(user=user)).exists()


def _require(user: AbstractBaseUser, perm: str, action: str, verb: str, deployment_id: int) -> None:
    """The role check of an operation on a deployment, a refusal left in its audit trail."""
    require_audited(user, perm, action, verb=verb, target=Deployment, target_id=deployment_id)


# -- one transition, one transaction -------------------------------------------------------------


def _transition(
    user: AbstractBaseUser | None,
    deployment_id: int,
    verb: str,
    change: Callable[[states.Deployment], states.Deployment],
    record: Callable[[Deployment, states.Deployment], dict[str, Any]] | None = None,
) -> Deployment:
    with transaction.atomic():
        row = locked_deployment(deployment_id)
        before = deployment_core(row)
        with refusals():
            after = change(before)
        extra = record(row, after) if record is not None else {}
        record_transition(user, row, before, after, verb, extra)
    return row


def record_transition(
    user: AbstractBaseUser | None,
    row: Deployment,
    before: states.Deployment,
    after: states.Deployment,
    verb: str,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Save what the transition changed on the row and its shares, with the audit event."""
    row.state = after.state.value
    row.reason = after.reason
    row.superseded_by_id = int(after.superseded_by) if after.superseded_by else None
    drill, pending = after.drill, after.pending_drill
    row.drill_started_at = drill.started_at if drill else None
    row.drill_answered_at = drill.answered_at if drill else None
    row.drill_model = drill.model if drill else ""
    row.drill_adapter = (drill.adapter or "") if drill else ""
    row.pending_drill_at = pending.started_at if pending else None
    row.pending_drill_resume = pending.resume.value if pending else ""
    row.save()
    ceiling = after.approval.ceiling if after.approval else {}
    slugs = set(after.requested) | set(ceiling) | set(after.percentages)
    behaviours = _behaviours(slugs)
    for slug in sorted(slugs):
        DeploymentShare.objects.update_or_create(
            deployment=row,
            behaviour=behaviours[slug],
            defaults={
                "requested": after.requested.get(slug),
                "ceiling": ceiling.get(slug),
                "live": after.percentages.get(slug),
            },
        )
    row.shares.exclude(behaviour__slug__in=slugs).delete()
    audit_event_record(
        actor=user,
        verb=verb,
        target=row,
        before=_summary(before),
        after={**_summary(after), **(extra or {})},
    )


def _summary(d: states.Deployment) -> dict[str, Any]:
    return {
        "state": d.state.value,
        "live": _percent_map(d.percentages),
        "reason": d.reason,
    }


def _percent_map(values: Mapping[str, int]) -> dict[str, str]:
    return {b: format_percentage(bp) for b, bp in sorted(values.items())}


def _money(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _now() -> datetime:
    return timezone.now()


def _get(deployment_id: int) -> Deployment:
    row = (
        Deployment.objects.select_related("adapter__behaviour", "adapter__registered_by")
        .filter(pk=deployment_id)
        .first()
    )
    if row is None:
        raise NotFound(f"deployment {deployment_id} does not exist")
    return row


def locked_deployment(deployment_id: int) -> Deployment:
    row = (
        Deployment.objects.select_for_update()
        .select_related("adapter__behaviour", "adapter__registered_by", "proposed_by")
        .filter(pk=deployment_id)
        .first()
    )
    if row is None:
        raise NotFound(f"deployment {deployment_id} does not exist")
    return row


def _locked_active(*, exclude: int) -> list[Deployment]:
    return list(
        Deployment.objects.select_for_update()
        .select_related("adapter__behaviour", "adapter__registered_by", "proposed_by")
        .filter(state=Deployment.State.ACTIVE)
        .exclude(pk=exclude)
        .order_by("id")
    )


def _served_elsewhere(behaviour: str, *, exclude: int) -> Deployment | None:
    """Another active deployment live on ``behaviour``: the route answers one per behaviour."""
    share = (
        DeploymentShare.objects.select_related("deployment__adapter")
        .filter(
            behaviour__slug=behaviour,
            live__isnull=False,
            deployment__state=Deployment.State.ACTIVE,
        )
        .exclude(deployment_id=exclude)
        .first()
    )
    return share.deployment if share else None


def _drill_subjects(row: Deployment) -> dict[str, str]:
    """The subject a drill asks about per behaviour: one inside the live rollout the drill
    interrupted, else inside the approved ceiling (where the adapter would answer once live)."""
    shares = {s.behaviour.slug: s for s in row.shares.select_related("behaviour")}
    live = {slug: s.live for slug, s in shares.items() if s.live}
    if row.pending_drill_resume != Deployment.State.ACTIVE or not live:
        live = {slug: s.ceiling for slug, s in shares.items() if s.ceiling}
    if not live:  # an approval at 0% everywhere: still ask, about the adapter's own behaviour
        return {row.adapter.behaviour.slug: "drill-0"}
    return {slug: subject_inside(slug, bp, row.salt) for slug, bp in sorted(live.items())}


def _behaviours(slugs: Any) -> dict[str, Behaviour]:
    wanted = set(slugs)
    found = {b.slug: b for b in Behaviour.objects.filter(slug__in=wanted)}
    missing = sorted(wanted - set(found))
    if missing:
        raise Invalid(f"no behaviour {', '.join(missing)}: a rollout names existing behaviours")
    return found
