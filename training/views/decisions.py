"""Decisions: every behaviour with its standing decision, and one behaviour's decision page (the
base agent's results beside the ladder, the button when the spec is a plain rule, the prompt
rule, prompt versions compared, the decision form and its history)."""

from __future__ import annotations

import logging
import subprocess
from typing import Any

from django.contrib.auth.decorators import permission_required
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from groundwork.access.errors import Refused, status_of
from project.htmx import render_page, wants_fragment

from ..models import Behaviour, Decision
from ..roles import DECIDE, VIEW
from ..selectors import decisions as reads
from ..services.decisions import decision_record, evidence_runs

logger = logging.getLogger(__name__)
can_view = permission_required(VIEW, raise_exception=True)
can_decide = permission_required(DECIDE, raise_exception=True)

FIELDS = ("kind", "method", "adapter", "rationale")


@can_view
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    latest = Decision.objects.filter(behaviour=OuterRef("pk")).order_by("-id")
    behaviours = Behaviour.objects.annotate(decision_id=Subquery(latest.values("id")[:1])).order_by(
        "slug"
    )
    decided = Decision.objects.in_bulk([b.decision_id for b in behaviours if b.decision_id])
    rows = [(b, decided.get(b.decision_id)) for b in behaviours]
    return render_page(request, "training/decisions/index.html", {"rows": rows})


def _context(
    request: HttpRequest,
    behaviour: Behaviour,
    *,
    error: str = "",
    form: dict[str, str] | None = None,
    notice: str = "",
    trials: list[reads.HookTrialRow] | None = None,
    trial_error: str = "",
) -> dict[str, Any]:
    version = behaviour.latest_version()
    if version is None:
        raise Http404(f"{behaviour.slug} has no spec version yet")
    spec = reads.spec_of(version)
    run = reads.latest_run(version)
    history = reads.history(behaviour)
    made = reads.button(spec)
    return {
        "behaviour": behaviour,
        "version": version,
        "spec": spec,
        "run": run,
        "base_groups": reads.base_groups(run),
        "ladder": reads.ladder(run, made, history[0] if history else None),
        "button": made,
        "files": sorted(reads.files(made)),
        "prompt_rows": reads.prompt_comparison(behaviour),
        "history": history,
        "standing": history[0] if history else None,
        "evidence": evidence_runs(behaviour),
        "kinds": Decision.Kind.choices,
        "methods": Decision.Method.choices,
        "adapters": Decision.Adapter.choices,
        "can_decide": request.user.has_perm(DECIDE),
        "error": error,
        "form": form or {},
        "notice": notice,
        "trials": trials,
        "trial_error": trial_error,
    }


@can_view
@require_http_methods(["GET", "POST"])
def decide(request: HttpRequest, slug: str) -> HttpResponse:
    behaviour = get_object_or_404(Behaviour, slug=slug)
    template = "training/decisions/decide.html"
    if request.method == "GET":
        notice = "Decision recorded." if request.GET.get("recorded") else ""
        return render_page(request, template, _context(request, behaviour, notice=notice))
    if not request.user.has_perm(DECIDE):
        raise PermissionDenied
    posted = {k: request.POST.get(k, "").strip() for k in FIELDS}
    try:
        decision = decision_record(user=request.user, behaviour_id=behaviour.pk, **posted)
    except Refused as error:
        context = _context(request, behaviour, error=str(error), form=posted)
        return render_page(request, template, context, "decision", status=status_of(error))
    if not wants_fragment(request):
        return redirect(reverse("loop:decide", args=[slug]) + "?recorded=1")
    notice = f"Recorded: {decision.summary}."
    return render_page(request, template, _context(request, behaviour, notice=notice), "decision")


@can_decide
@require_POST
def hook_trial(request: HttpRequest, slug: str) -> HttpResponse:
    """Feed the generated hook the calls of the behaviour's latest scored rollouts."""
    behaviour = get_object_or_404(Behaviour, slug=slug)
    version = behaviour.latest_version()
    if version is None:
        raise Http404(f"{behaviour.slug} has no spec version yet")
    made = reads.button(reads.spec_of(version))
    if made.hook is None:
        raise Http404(f"{behaviour.slug} has nothing for a hook to refuse")
    try:
        trials = reads.hook_trials(version, made.hook)
    except (ValueError, RuntimeError, OSError, subprocess.SubprocessError) as error:
        # The hook runs as a process per call: a missing interpreter, a timeout or a folder the
        # trial refuses is told on the page, with the button to try again, not a bare 500.
        context = _context(request, behaviour, trial_error=str(error))
    except Exception:
        logger.exception("the hook trial of %s failed", behaviour.slug)
        why = "an unexpected error, logged for the administrators"
        context = _context(request, behaviour, trial_error=why)
    else:
        context = _context(request, behaviour, trials=trials)
    return render_page(request, "training/decisions/decide.html", context, "trial")


@can_view
@require_GET
def button_file(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    """One generated file (the hook's settings or script, a git hook, the AGENTS.md rule)."""
    behaviour = get_object_or_404(Behaviour, slug=slug)
    version = behaviour.latest_version()
    if version is None:
        raise Http404(f"{behaviour.slug} has no spec version yet")
    generated = reads.files(reads.button(reads.spec_of(version)))
    if name not in generated:
        raise Http404(f"{behaviour.slug} generates no {name}")
    content, content_type = generated[name]
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
