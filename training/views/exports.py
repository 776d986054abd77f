"""Training exports: the list with a form that starts one as a job, and an export's page, which
polls while it runs and then shows its manifest (counts, redaction, sources) or its refusal.
Both mark a written export whose inputs changed since as stale, with why, and offer to export
it again (plans refuse a stale one)."""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from groundwork.access.errors import Refused, status_of
from project.htmx import render_fragment, render_page, wants_fragment

from ..models import Behaviour, TrainingExport
from ..roles import EXPORT
from ..selectors.exports import export_staleness, exports_staleness
from ..services.exports import training_export_again, training_export_create
from ..tasks import training_export_enqueue

can_export = permission_required(EXPORT, raise_exception=True)
PAGE_SIZE = 30


def _list(
    request: HttpRequest, *, error: str = "", form: dict[str, str] | None = None, status: int = 200
) -> HttpResponse:
    rows = TrainingExport.objects.select_related("behaviour", "version", "created_by")
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    shown = list(page.object_list)
    stale = exports_staleness(shown)
    return render_page(
        request,
        "training/exports/list.html",
        {
            "page": page,
            "rows": [(export, stale.get(export.pk, "")) for export in shown],
            "behaviours": Behaviour.objects.order_by("slug"),
            "kinds": TrainingExport.Kind.choices,
            "error": error,
            "form": form or {"behaviour": request.GET.get("behaviour", "")},
        },
        status=status,
    )


@can_export
@require_http_methods(["GET", "POST"])
def export_list(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _list(request)
    posted = {k: request.POST.get(k, "") for k in ("behaviour", "kind")}
    behaviour = Behaviour.objects.filter(slug=posted["behaviour"]).first()
    if behaviour is None:
        return _list(request, error="Choose a behaviour to export.", form=posted, status=422)
    try:
        export = training_export_create(
            user=request.user, behaviour_id=behaviour.pk, kind=posted["kind"]
        )
    except Refused as error:
        return _list(request, error=str(error), form=posted, status=status_of(error))
    training_export_enqueue(export.pk)
    return redirect("loop:export", export.pk)


@can_export
@require_GET
def export_detail(request: HttpRequest, pk: int) -> HttpResponse:
    export = get_object_or_404(
        TrainingExport.objects.select_related("behaviour", "version", "created_by"), pk=pk
    )
    context = {
        "export": export,
        "manifest": export.manifest or {},
        "stale": export_staleness(export),
    }
    if wants_fragment(request, target=f"training-export-{export.pk}"):
        # The finished export still replaces the running one; then htmx stops polling.
        return render_fragment(
            request,
            "training/exports/detail.html#export",
            context,
            stop_polling=export.finished,
        )
    return render_page(request, "training/exports/detail.html", context)


@can_export
@require_POST
def export_again(request: HttpRequest, pk: int) -> HttpResponse:
    """Export again what the export asked for, as the rows are now; open the new one."""
    try:
        export = training_export_again(user=request.user, export_id=pk)
    except Refused as error:
        return _list(request, error=str(error), status=status_of(error))
    training_export_enqueue(export.pk)
    return redirect("loop:export", export.pk)


@can_export
@require_GET
def export_manifest(request: HttpRequest, pk: int) -> HttpResponse:
    export = get_object_or_404(TrainingExport, pk=pk)
    if export.manifest is None:
        raise Http404("This export has no manifest (it is not written, or it was refused).")
    return JsonResponse(export.manifest, json_dumps_params={"indent": 2, "sort_keys": True})
