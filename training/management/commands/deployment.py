"""`manage.py deployment ACTION TARGET --as USERNAME [--json]`: a deployment's lifecycle from
the terminal, through the services and role checks the deployment pages use, so the two-person
rule holds here too.

- ``propose ADAPTER --percent SLUG=PCT...``: a deployment of an adapter (NAME@VERSION or id) at
  a rollout percentage per behaviour; optional gate thresholds (``--min-rollouts``,
  ``--min-pass-rate``, ``--tolerance``, as percentages) and daily caps (``--tokens-per-day``,
  ``--money-per-day``). An approver decides next.
- ``approve DEPLOYMENT``: on the held-out gate computed now, then a drill of the kill switch.
  The approver holds the approver role and neither registered the adapter nor proposed it.
- ``activate DEPLOYMENT``: serve it at its approved percentages, then drill it live.
- ``drill DEPLOYMENT``: kill it, ask the route, restore it if the route answered the base model.
- ``kill DEPLOYMENT --reason TEXT``: the kill switch; no approval needed.
- ``rollback DEPLOYMENT --reason TEXT``: out, and the version it replaced back in.
- ``retire DEPLOYMENT --reason TEXT``.

DEPLOYMENT is its id, or an adapter's NAME@VERSION for that adapter's latest deployment. Exit 0
done; 1 refused (the role, the two-person rule, the gate, the deployment's state); 2 a usage
error (an unknown adapter, deployment, behaviour or user, a bad percentage, no reason).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from training.core.deploy.bucketing import parse_percentage
from training.management.loop_commands import (
    Done,
    LoopCommand,
    adapter_named,
    deployment_named,
    deployment_payload,
    deployment_text,
    usage_error,
)
from training.models import Deployment
from training.services import deploy

# The actions on an existing deployment: the service, and whether it takes a reason.
ACTIONS: dict[str, tuple[Callable[..., Deployment], bool]] = {
    "approve": (deploy.deployment_approve, False),
    "activate": (deploy.deployment_activate, False),
    "drill": (deploy.deployment_drill, False),
    "kill": (deploy.deployment_kill, True),
    "rollback": (deploy.deployment_rollback, True),
    "retire": (deploy.deployment_retire, True),
}


class Command(LoopCommand):
    help = "Propose, approve, activate, drill, kill, roll back or retire a deployment."
    person = "required"

    def add_step_arguments(self, parser) -> None:
        parser.add_argument("action", choices=("propose", *ACTIONS))
        parser.add_argument(
            "target", metavar="TARGET", help="propose: the adapter; else the deployment"
        )
        parser.add_argument(
            "--percent",
            action="append",
            default=[],
            metavar="SLUG=PCT",
            help="propose: a behaviour and its rollout percentage, e.g. failing-test-repair=10",
        )
        parser.add_argument("--min-rollouts", type=int, metavar="N", help="the gate's minimum")
        parser.add_argument("--min-pass-rate", metavar="PCT", help="the gate's pass rate, e.g. 80")
        parser.add_argument("--tolerance", metavar="PCT", help="allowed drop below the base model")
        parser.add_argument("--tokens-per-day", type=int, metavar="N", help="a daily token cap")
        parser.add_argument("--money-per-day", metavar="X", help="a daily spending cap")
        parser.add_argument("--salt", default="", help="re-buckets subjects (default none)")
        parser.add_argument("--reason", help="kill, rollback, retire: why (the audit log shows it)")

    def step(self, *, user, action: str, target: str, **options: Any) -> Done:
        if action == "propose":
            row = _propose(user, target, options)
            payload = deployment_payload(row)
            return Done(payload, deployment_text(payload) + "; an approver decides next")
        service, needs_reason = ACTIONS[action]
        if options["percent"]:
            raise usage_error(f"--percent is for propose; {action} keeps the approved rollout")
        if options["reason"] and not needs_reason:
            raise usage_error(f"--reason is for kill, rollback and retire, not {action}")
        reason = {"reason": options["reason"] or ""} if needs_reason else {}
        if needs_reason and not reason["reason"].strip():
            raise usage_error("say why with --reason; the audit log and the page show it")
        row = service(user=user, deployment_id=deployment_named(target).pk, **reason)
        payload = deployment_payload(row)
        return Done(payload, deployment_text(payload))


def _propose(user: Any, adapter: str, options: dict[str, Any]) -> Deployment:
    if not options["percent"]:
        raise usage_error("name each behaviour's rollout: --percent SLUG=PCT")
    return deploy.deployment_propose(
        user=user,
        adapter_id=adapter_named(adapter).pk,
        percentages=dict(_percentage(p) for p in options["percent"]),
        min_rollouts=options["min_rollouts"],
        min_pass_rate=_number(options["min_pass_rate"], "--min-pass-rate", percent=True),
        tolerance=_number(options["tolerance"], "--tolerance", percent=True),
        tokens_per_day=options["tokens_per_day"],
        money_per_day=_number(options["money_per_day"], "--money-per-day"),
        salt=options["salt"],
    )


def _percentage(item: str) -> tuple[str, int]:
    slug, _, text = item.partition("=")
    if not slug.strip() or not text.strip():
        raise usage_error(f"--percent {item!r} is not SLUG=PCT")
    try:
        return slug.strip(), parse_percentage(text)
    except ValueError as error:
        raise usage_error(f"--percent {item!r}: {error}") from None


def _number(text: str | None, flag: str, *, percent: bool = False) -> Decimal | None:
    """A number as typed; a percentage ("80", "2.5%") as the fraction the gate compares."""
    if text is None:
        return None
    try:
        value = Decimal(text.strip().removesuffix("%") if percent else text.strip())
    except InvalidOperation:
        raise usage_error(f"{flag} {text!r} is not a number") from None
    return value / 100 if percent else value
