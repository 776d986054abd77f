"""Usage reports from serving: added to the deployment's row for the report's UTC day, and the
report that brings the day to its cap kills the deployment by itself, in the same transaction.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db import transaction

from groundwork.access.errors import Invalid, NotFound
from groundwork.services.audit import audit_event_record, iso
from training.core.deploy import states
from training.core.deploy.budget import (
    BudgetCap,
    BudgetCheck,
    BudgetError,
    DayUsage,
    UsageReport,
    add_usage,
    record_usage,
    utc_day,
)

from ..models import ApiClient, Deployment, DeploymentUsage
from ..selectors.deploy import deployment_core
from .deploy import locked_deployment, record_transition


def usage_report(
    *, client: ApiClient, deployment_id: int, tokens: int, money: Decimal, at: datetime
) -> BudgetCheck:
    """Add one report; the check says whether it tripped the day's cap (and so killed)."""
    try:
        report = UsageReport(at=at, tokens=tokens, money=money)
        day = utc_day(at)
    except BudgetError as error:
        raise Invalid(str(error)) from None
    with transaction.atomic():
        deployment = Deployment.objects.filter(pk=deployment_id).first()
        if deployment is None:
            raise NotFound(f"deployment {deployment_id} does not exist")
        # One row per deployment and day, locked: two hosts reporting at once add up, and only
        # one of them sees the cap trip.
        row, _ = DeploymentUsage.objects.select_for_update().get_or_create(
            deployment=deployment, day=day
        )
        before = DayUsage(day=day, tokens=row.tokens, money=_plain(row.money))
        try:
            if deployment.has_budget:
                cap = BudgetCap(
                    tokens_per_day=deployment.tokens_per_day,
                    money_per_day=deployment.money_per_day,
                )
                check = record_usage(cap, before, report)
            else:
                after = add_usage(before, report)
                check = BudgetCheck(usage=after, exceeded=False, tripped=False, reason="")
        except BudgetError as error:  # a sum past what the day's row holds
            raise Invalid(str(error)) from None
        row.tokens, row.money = check.usage.tokens, check.usage.money
        row.exceeded = check.exceeded
        row.reports += 1
        row.save()
        if check.tripped:
            _trip(client, deployment_id, check, at)
    return check


def _trip(client: ApiClient, deployment_id: int, check: BudgetCheck, at: datetime) -> None:
    deployment = locked_deployment(deployment_id)
    audit_event_record(
        actor=None,
        verb="deployment.budget_trip",
        target=deployment,
        before=None,
        after={
            "reason": check.reason,
            "day": check.usage.day.isoformat(),
            "tokens": check.usage.tokens,
            "money": str(check.usage.money),
            "reported_at": iso(at),
            "api_client": client.name,
        },
    )
    before = deployment_core(deployment)
    if before.state in states.KILLABLE or before.pending_drill is not None:
        after = states.kill(before, reason=f"budget cap: {check.reason}")
        record_transition(None, deployment, before, after, "deployment.kill", {"budget": True})


def _plain(amount: Decimal) -> Decimal:
    """The column's fixed places dropped (2.500000 is 2.5), so reasons read as people write."""
    return amount.quantize(Decimal(1)) if amount == amount.to_integral() else amount.normalize()
