"""Training plans: the list, a form (a written export, base model, LoRA or QLoRA, gate, budget),
and a plan's page with its markdown rendered and both files to download."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import permission_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_http_methods
from markdown_it import MarkdownIt

from groundwork.access.errors import Refused, status_of
from project.htmx import render_page
from training.core.plans import DTYPES, PlanError, render_markdown, render_trl_config

from ..models import TrainingExport, TrainingPlan
from ..roles import PLAN
from ..services.plans import PlanInvalid, plan_of, training_plan_create

can_plan = permission_required(PLAN, raise_exception=True)
PAGE_SIZE = 30

# CommonMark with raw HTML off: the plan carries text users typed (a spec's description, a
# model name), which must come out escaped; markdown-it also refuses javascript: links.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


class PlanForm(forms.Form):
    export = forms.ModelChoiceField(
        queryset=TrainingExport.objects.filter(status=TrainingExport.Status.DONE).select_related(
            "behaviour"
        ),
        help_text="The dataset snapshot: a written export.",
    )
    method = forms.ChoiceField(choices=TrainingPlan.Method.choices)
    base_model = forms.CharField(max_length=200, initial="Qwen/Qwen2.5-Coder-7B-Instruct")
    adapter = forms.ChoiceField(choices=TrainingPlan.Adapter.choices)
    lora_rank = forms.IntegerField(initial=16)
    lora_alpha = forms.IntegerField(initial=32)
    lora_dropout = forms.FloatField(initial=0.05)
    target_modules = forms.CharField(
        initial="q_proj k_proj v_proj o_proj", help_text="Module names, separated by spaces."
    )
    compute_dtype = forms.ChoiceField(
        label="dtype",
        choices=[(d, d) for d in DTYPES],
        help_text="The dtype the base model loads in; with QLoRA also its compute dtype.",
    )
    min_pass_rate = forms.FloatField(initial=0.8, help_text="On the held-out tasks, 0 to 1.")
    max_regression = forms.FloatField(initial=0.0, help_text="Below the base agent, 0 to 1.")
    gpu_hours = forms.FloatField(initial=8)
    money = forms.FloatField(initial=50)
    currency = forms.CharField(max_length=3, initial="USD")

    FIELDSETS = (
        ("What to train", ("export", "method", "base_model")),
        (
            "Adapter",
            ("adapter", "lora_rank", "lora_alpha", "lora_dropout", "target_modules"),
        ),
        ("Model", ("compute_dtype",)),
        (
            "Promotion gate and budget",
            ("min_pass_rate", "max_regression", "gpu_hours", "money", "currency"),
        ),
    )

    def fieldsets(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(legend, [self[name] for name in names]) for legend, names in self.FIELDSETS]

    def service_fields(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["export_id"] = data.pop("export").pk
        data["target_modules"] = data["target_modules"].replace(",", " ").split()
        return data


@can_plan
@require_GET
def plan_list(request: HttpRequest) -> HttpResponse:
    rows = TrainingPlan.objects.select_related("behaviour", "export", "created_by")
    return render_page(
        request,
        "training/plans/list.html",
        {"page": Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))},
    )


@can_plan
@require_http_methods(["GET", "POST"])
def plan_new(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        form = PlanForm(initial={"export": request.GET.get("export")})
        return render_page(request, "training/plans/new.html", {"form": form})
    form = PlanForm(request.POST)
    problems: list[str] = []
    status = 422
    if form.is_valid():
        try:
            plan = training_plan_create(user=request.user, **form.service_fields())
        except PlanInvalid as refused:
            problems = list(refused.problems)
        except Refused as error:
            problems, status = [str(error)], status_of(error)
        else:
            return redirect("loop:plan", plan.pk)
    context = {"form": form, "problems": problems}
    return render_page(request, "training/plans/new.html", context, status=status)


def _plan(pk: int) -> TrainingPlan:
    return get_object_or_404(
        TrainingPlan.objects.select_related("behaviour", "version", "export", "created_by"), pk=pk
    )


def rendered(markdown: str) -> SafeString:
    # markdown-it with html off escapes every character of the text it is given.
    return mark_safe(_MARKDOWN.render(markdown))


@can_plan
@require_GET
def plan_detail(request: HttpRequest, pk: int) -> HttpResponse:
    row = _plan(pk)
    try:
        plan = plan_of(row)
    except PlanError as error:  # stored before a rule changed: say so rather than fail
        context = {"row": row, "problems": error.problems}
        return render_page(request, "training/plans/detail.html", context)
    context = {
        "row": row,
        "markdown": rendered(render_markdown(plan)),
        "config": render_trl_config(plan),
    }
    return render_page(request, "training/plans/detail.html", context)


def _download(content: str, name: str, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@can_plan
@require_GET
def plan_markdown(request: HttpRequest, pk: int) -> HttpResponse:
    row = _plan(pk)
    name = f"{row.behaviour.slug}-{row.method}-plan.md"
    return _download(render_markdown(plan_of(row)), name, "text/markdown; charset=utf-8")


@can_plan
@require_GET
def plan_config(request: HttpRequest, pk: int) -> HttpResponse:
    row = _plan(pk)
    return _download(render_trl_config(plan_of(row)), "plan.yaml", "application/yaml")
