"""Adapters and deployments: register, propose, approve after seeing the held-out gate, activate,
move a rollout, kill, roll back, retire; the serving configuration and the API clients.

A deployment's page is one fragment (``#deployment-<id>``) every action swaps in place; a refusal
comes back as the same fragment with the reason in words (403 for who, 409 for when, 422 for
what), and without htmx as the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from groundwork.access.errors import Invalid, Refused, status_of
from project.htmx import render_page, wants_fragment
from training.core.deploy import serving, states
from training.core.deploy.bucketing import format_percentage, parse_percentage
from trajectories.core.limits import echo

from ..models import Adapter, ApiClient, Behaviour, Deployment
from ..models.deploy import DEFAULT_THRESHOLDS
from ..roles import (
    APPROVE_DEPLOYMENT,
    MANAGE_API_CLIENTS,
    OPERATE_DEPLOYMENT,
    PROPOSE_DEPLOYMENT,
    REGISTER_ADAPTER,
    VIEW,
)
from ..selectors import deploy as reads
from ..services import deploy as service
from ..services.deploy_adapters import adapter_register
from ..services.deploy_clients import api_client_create, api_client_revoke

can_view = permission_required(VIEW, raise_exception=True)
can_register = permission_required(REGISTER_ADAPTER, raise_exception=True)
can_propose = permission_required(PROPOSE_DEPLOYMENT, raise_exception=True)
can_approve = permission_required(APPROVE_DEPLOYMENT, raise_exception=True)
can_operate = permission_required(OPERATE_DEPLOYMENT, raise_exception=True)
can_manage_clients = permission_required(MANAGE_API_CLIENTS, raise_exception=True)

PAGE_SIZE = 50
ADAPTER_FIELDS = (
    "behaviour",
    "name",
    "version",
    "eval_suite",
    "base_model",
    "training_plan",
    "dataset_sha256",
    "artifact_uri",
    "artifact_sha256",
    "rank",
)


def _percentages(post: Mapping[str, str], prefix: str = "pct:") -> dict[str, int]:
    """``pct:<behaviour>`` fields, as percentages people type ("10", "12.5%"), in basis points."""
    found = {}
    for field, text in post.items():
        if field.startswith(prefix) and text.strip():
            try:
                found[field.removeprefix(prefix)] = parse_percentage(text)
            except ValueError as error:
                raise Invalid(f"{field.removeprefix(prefix)}: {error}") from None
    return found


# -- deployments ---------------------------------------------------------------------------------


@can_view
@require_GET
def deployment_list(request: HttpRequest) -> HttpResponse:
    rows = reads.deployments_with_related().prefetch_related("shares__behaviour")
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render_page(
        request,
        "training/deploy/deployments.html",
        {
            "page": page,
            "rows": [(d, _rollout(d)) for d in page.object_list],
            "adapters": Adapter.objects.count(),
        },
        "results",
        target="deployment-results",
    )


def _rollout(d: Deployment) -> list[tuple[str, str]]:
    """Per behaviour, the percentage that matters in the deployment's state, and which it is."""
    shown = []
    for share in d.shares.all():
        if d.state == Deployment.State.ACTIVE and share.live is not None:
            shown.append((share.behaviour.slug, f"{format_percentage(share.live)} live"))
        elif share.ceiling is not None:
            shown.append((share.behaviour.slug, f"{format_percentage(share.ceiling)} approved"))
        elif share.requested is not None:
            shown.append((share.behaviour.slug, f"{format_percentage(share.requested)} proposed"))
    return shown


def _deployment_context(request: HttpRequest, pk: int, **extra: Any) -> dict[str, Any]:
    row = get_object_or_404(reads.deployments_with_related(), pk=pk)
    d = reads.deployment_core(row)
    report = reads.gate_report(row.adapter, row.thresholds())
    user = request.user
    refusal = ""
    if user.has_perm(APPROVE_DEPLOYMENT):
        # The approval rule itself, asked in advance: the button says why before anyone clicks.
        try:
            states.approve(
                d,
                verdict=report.verdict,
                approver=user.get_username(),
                is_approver=True,
                at=timezone.now(),
            )
        except states.Refusal as error:
            refusal = error.message
    shares = list(row.shares.select_related("behaviour").order_by("behaviour__slug"))
    return {
        "deployment": row,
        "core": d,
        "shares": [
            {
                "behaviour": s.behaviour.slug,
                "requested": _shown(s.requested),
                "ceiling": _shown(s.ceiling),
                "live": _shown(s.live),
                "live_value": format_percentage(s.live or 0).removesuffix("%"),
                "ceiling_value": format_percentage(s.ceiling or s.requested or 0).removesuffix("%"),
            }
            for s in shares
        ],
        "report": report,
        "approve_refusal": refusal,
        "approvals": [
            (a, [(b, format_percentage(bp)) for b, bp in sorted(a.ceiling.items())])
            for a in row.approvals.select_related("approver")
        ],
        "usage": reads.usage_today(row),
        "events": [(e, _details(e.after)) for e in reads.deployment_events(row)[:100]],
        "versions": reads.previous_versions(row)[:10],
        "rollback_target": states.previous_approved(
            d, [reads.deployment_core(h) for h in row.supersedes.all()]
        ),
        **extra,
    }


def _details(after: Any) -> list[tuple[str, str]]:
    """An audit event's recorded values, compact; empty values left out."""
    if not isinstance(after, dict):
        return []
    shown = []
    for key, value in after.items():
        if value in (None, "", {}, []):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        shown.append((key, text if len(text) <= 300 else text[:299] + "…"))
    return shown


def _shown(bp: int | None) -> str:
    return "—" if bp is None else format_percentage(bp)


def _detail(request: HttpRequest, pk: int, *, status: int = 200, **extra: Any) -> HttpResponse:
    return render_page(
        request,
        "training/deploy/deployment.html",
        _deployment_context(request, pk, **extra),
        "deployment",
        status=status,
    )


@can_view
@require_GET
def deployment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _detail(request, pk)


def _act(request: HttpRequest, pk: int, action: Callable[[], str]) -> HttpResponse:
    """Run one service call for the deployment page (``action`` returns what it did, in words)
    and answer with the fragment under htmx, else a redirect; a refusal with the page."""
    try:
        done = action()
    except Refused as error:
        # A deployment that does not exist answers 404 from _detail itself.
        return _detail(
            request, pk, status=status_of(error), error=str(error), form=request.POST.dict()
        )
    if wants_fragment(request):
        return _detail(request, pk, notice=done)
    messages.success(request, done)
    return redirect("deploy:deployment", pk=pk)


def _reason(request: HttpRequest, what: str) -> str:
    return request.POST.get("reason", "").strip() or f"{what} by {request.user.get_username()}"


@can_approve
@require_POST
def deployment_approve(request: HttpRequest, pk: int) -> HttpResponse:
    def approve() -> str:
        wanted = _percentages(request.POST)
        service.deployment_approve(user=request.user, deployment_id=pk, percentages=wanted or None)
        return "Approved on the held-out gate; the kill drill ran."

    return _act(request, pk, approve)


@can_operate
@require_POST
def deployment_activate(request: HttpRequest, pk: int) -> HttpResponse:
    def activate() -> str:
        service.deployment_activate(user=request.user, deployment_id=pk)
        return "Active at its approved rollout; the kill drill ran again while live."

    return _act(request, pk, activate)


@can_operate
@require_POST
def deployment_drill(request: HttpRequest, pk: int) -> HttpResponse:
    def drill() -> str:
        d = service.deployment_drill(user=request.user, deployment_id=pk)
        return "Kill drill passed." if d.drill_adapter == "" else "Kill drill failed."

    return _act(request, pk, drill)


@can_operate
@require_POST
def deployment_percentage(request: HttpRequest, pk: int) -> HttpResponse:
    def change() -> str:
        behaviour = request.POST.get("behaviour", "")
        try:
            bp = parse_percentage(request.POST.get("percentage", ""))
        except ValueError as error:
            raise Invalid(str(error)) from None
        service.deployment_percentage_set(
            user=request.user, deployment_id=pk, behaviour=behaviour, basis_points=bp
        )
        return f"{behaviour} now at {format_percentage(bp)}."

    return _act(request, pk, change)


@can_operate
@require_POST
def deployment_kill(request: HttpRequest, pk: int) -> HttpResponse:
    def kill() -> str:
        reason = _reason(request, "kill switch pulled")
        service.deployment_kill(user=request.user, deployment_id=pk, reason=reason)
        return "Killed: the route answers the base model."

    return _act(request, pk, kill)


@can_operate
@require_POST
def deployment_rollback(request: HttpRequest, pk: int) -> HttpResponse:
    def rollback() -> str:
        reason = _reason(request, "rolled back")
        back = service.deployment_rollback(user=request.user, deployment_id=pk, reason=reason)
        return f"Rolled back: deployment {back.pk} ({back.adapter.key}) serves again."

    return _act(request, pk, rollback)


@can_operate
@require_POST
def deployment_retire(request: HttpRequest, pk: int) -> HttpResponse:
    def retire() -> str:
        reason = _reason(request, "retired")
        service.deployment_retire(user=request.user, deployment_id=pk, reason=reason)
        return "Retired."

    return _act(request, pk, retire)


# -- adapters ------------------------------------------------------------------------------------


@can_view
@require_GET
def adapter_list(request: HttpRequest) -> HttpResponse:
    rows = Adapter.objects.select_related("behaviour", "registered_by")
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render_page(request, "training/deploy/adapters.html", {"page": page})


@can_register
@require_http_methods(["GET", "POST"])
def adapter_new(request: HttpRequest) -> HttpResponse:
    behaviours = Behaviour.objects.order_by("slug")
    if request.method == "POST":
        form = {k: request.POST.get(k, "").strip() for k in ADAPTER_FIELDS}
        rank = form["rank"]
        try:
            adapter, created = adapter_register(
                user=request.user,
                behaviour=form["behaviour"],
                name=form["name"],
                version=form["version"],
                eval_suite=form["eval_suite"],
                base_model=form["base_model"],
                training_plan=form["training_plan"],
                dataset_sha256=form["dataset_sha256"],
                artifact_uri=form["artifact_uri"],
                artifact_sha256=form["artifact_sha256"],
                # Not a number: registered as 0, refused with the other fields' problems.
                rank=int(rank) if rank.isdigit() else 0,
            )
        except Refused as error:
            problems = dict(getattr(error, "fields", {}))
            if "rank" in problems and rank and not rank.isdigit():
                problems["rank"] = f"{echo(rank)} is not a whole number"
            context = {
                "form": form,
                "behaviours": behaviours,
                "error": "" if problems else str(error),
                "problems": [(f.replace("_", " "), why) for f, why in problems.items()],
                "invalid": set(problems),
            }
            return render_page(
                request, "training/deploy/adapter_new.html", context, status=status_of(error)
            )
        messages.success(
            request,
            f"Registered {adapter.key}."
            if created
            else f"{adapter.key} was already registered with this content; nothing changed.",
        )
        return redirect("deploy:adapter", pk=adapter.pk)
    slug = request.GET.get("behaviour", "")
    chosen = behaviours.filter(slug=slug).first()
    form = {
        "behaviour": slug,
        "name": f"{slug}-lora" if slug else "",
        "rank": "16",
        "base_model": (chosen.base_model if chosen else "") or settings.TRAJ2ENV_BASE_MODEL,
    }
    return render_page(
        request, "training/deploy/adapter_new.html", {"form": form, "behaviours": behaviours}
    )


@can_view
@require_GET
def adapter_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _adapter_page(request, pk)


def _adapter_page(
    request: HttpRequest, pk: int, *, status: int = 200, **extra: Any
) -> HttpResponse:
    adapter = get_object_or_404(Adapter.objects.select_related("behaviour", "registered_by"), pk=pk)
    report = reads.gate_report(adapter, DEFAULT_THRESHOLDS)
    posted: Mapping[str, str] = extra.pop("form", {})
    fields = {
        "min_rollouts": str(DEFAULT_THRESHOLDS.min_rollouts),
        "min_pass_rate": report.min_pass_rate.removesuffix("%"),
        "tolerance": report.tolerance,
        "tokens_per_day": "",
        "money_per_day": "",
    }
    fields.update({k: posted[k] for k in fields if k in posted})
    return render_page(
        request,
        "training/deploy/adapter.html",
        {
            "adapter": adapter,
            "report": report,
            "deployments": reads.deployments_with_related().filter(adapter=adapter),
            # One rollout field per behaviour the gate measures: only those can be rolled out.
            "proposal": [
                {
                    "behaviour": g.behaviour,
                    "gated": g.row.gated,
                    "value": posted.get(f"pct:{g.behaviour}", "10" if g.row.gated else "0"),
                }
                for g in report.rows
            ],
            "fields": fields,
            **extra,
        },
        status=status,
    )


@can_propose
@require_POST
def adapter_propose(request: HttpRequest, pk: int) -> HttpResponse:
    post = request.POST
    try:
        deployment = service.deployment_propose(
            user=request.user,
            adapter_id=pk,
            percentages=_percentages(post),
            min_rollouts=_optional(post, "min_rollouts", int),
            min_pass_rate=_optional(post, "min_pass_rate", _fraction),
            tolerance=_optional(post, "tolerance", _fraction),
            tokens_per_day=_optional(post, "tokens_per_day", int),
            money_per_day=_optional(post, "money_per_day", Decimal),
            salt=post.get("salt", ""),
        )
    except Refused as error:
        # An adapter that does not exist answers 404 from _adapter_page itself.
        return _adapter_page(
            request, pk, status=status_of(error), error=str(error), form=post.dict()
        )
    messages.success(request, f"Deployment {deployment.pk} proposed; an approver decides next.")
    return redirect("deploy:deployment", pk=deployment.pk)


def _fraction(text: str) -> Decimal:
    """A percentage as typed ("60", "2.5%") as the fraction the gate compares (0.6, 0.025)."""
    return Decimal(text.strip().removesuffix("%")) / 100


def _optional(post: Mapping[str, str], field: str, parse: Callable[[str], Any]) -> Any:
    text = post.get(field, "").strip()
    if not text:
        return None
    try:
        return parse(text)
    except (ValueError, InvalidOperation):
        raise Invalid(f"{field.replace('_', ' ')}: {echo(text)} is not a number") from None


# -- serving and API clients ---------------------------------------------------------------------


def _serving_inputs(request: HttpRequest) -> tuple[dict[str, str], str, list[str]]:
    models = reads.base_models()
    endpoints = serving.default_endpoints(models)
    for model in models:
        endpoints[model] = request.GET.get(f"endpoint:{model}", "").strip() or endpoints[model]
    return endpoints, request.GET.get("adapter_root", "").strip() or "/srv/adapters", models


@can_view
@require_GET
def serving_page(request: HttpRequest) -> HttpResponse:
    endpoints, root, _ = _serving_inputs(request)
    try:
        config, error = reads.serving_config(endpoints=endpoints, adapter_root=root), ""
    except serving.ServingError as problem:
        config, error = None, str(problem)
    return render_page(
        request,
        "training/deploy/serving.html",
        {
            "config": config,
            "error": error,
            "endpoints": endpoints,
            "adapter_root": root,
            "query": request.GET.urlencode(),
        },
        status=200 if config else 409,
    )


@can_view
@require_GET
def serving_download(request: HttpRequest, kind: str) -> HttpResponse:
    endpoints, root, _ = _serving_inputs(request)
    try:
        config = reads.serving_config(endpoints=endpoints, adapter_root=root)
    except serving.ServingError as problem:
        return HttpResponse(str(problem), status=409, content_type="text/plain; charset=utf-8")
    if kind == "litellm":
        body, name, mime = config.litellm, "litellm.yaml", "application/yaml"
    else:
        body, name, mime = config.vllm_script, "vllm.sh", "text/x-shellscript"
    response = HttpResponse(body, content_type=f"{mime}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@can_manage_clients
@require_http_methods(["GET", "POST"])
def api_clients(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {}
    status = 200
    if request.method == "POST":
        try:
            client, token = api_client_create(user=request.user, name=request.POST.get("name", ""))
            # Shown in this answer only: the token is not stored and no later page can show it.
            context = {"created": client, "token": token}
        except Refused as error:
            context = {"error": str(error), "name": request.POST.get("name", "")}
            status = status_of(error)
    context["clients"] = ApiClient.objects.select_related("created_by")
    response = render_page(request, "training/deploy/api_clients.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@can_manage_clients
@require_POST
def api_client_revoke_view(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        client = api_client_revoke(user=request.user, client_id=pk)
        messages.success(request, f"{client.name}'s token no longer works.")
    except Refused as error:
        messages.error(request, str(error))
    return redirect("deploy:api_clients")
