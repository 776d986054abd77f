"""The desk settings page: an admin changes how many reviews a candidate needs and how many
labels a preference pair needs, in the app, with no restart. It belongs to both floors, so it
lives here; each floor's service says what a new number does to the rows already there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from groundwork.access.errors import Invalid
from project.htmx import render_page
from tasks_review.models import DeskSetting
from tasks_review.roles import CHANGE_SETTINGS
from tasks_review.selectors import desk_settings as reads
from tasks_review.services.desk_settings import reviews_per_candidate_set
from training.services.labels import labels_per_pair_set

SETTERS: dict[str, Callable[..., DeskSetting]] = {
    DeskSetting.Key.REVIEWS_PER_CANDIDATE: reviews_per_candidate_set,
    DeskSetting.Key.LABELS_PER_PAIR: labels_per_pair_set,
}


@permission_required(CHANGE_SETTINGS, raise_exception=True)
@require_http_methods(["GET", "POST"])
def page(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request)
    key = request.POST.get("key", "")
    setter = SETTERS.get(key)
    if setter is None:
        return _page(request, error="There is no such setting.", status=422)
    try:
        row = setter(user=request.user, value=request.POST.get("value", ""))
    except Invalid as refused:
        said = str(refused)
        return _page(request, error=f"{said[:1].upper()}{said[1:]}.", key=key, status=422)
    messages.success(
        request, f"{row.get_key_display()}: now {row.value}, from the next decision on."
    )
    return redirect("desk_settings")


def _page(request: HttpRequest, *, error: str = "", key: str = "", status: int = 200) -> Any:
    context = {"settings": reads.shown(), "error": error, "error_key": key}
    return render_page(request, "desk_settings.html", context, status=status)
