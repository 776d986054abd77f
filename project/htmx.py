"""One way for a view to answer both a browser and HTMX: the whole page, or only the fragment
HTMX swaps in, from the same template (Django's `{% partialdef %}`, named "page.html#name").

    return render_page(request, "runs/list.html", {"page": page}, "runs")

Every answer varies on HX-Request, so no cache serves a fragment as the page or the page as a
fragment. A polled fragment whose job has finished answers 286, on which htmx swaps it in and
stops polling. Nothing here knows the apps.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseStopPolling


def wants_fragment(request: HttpRequest, target: str | None = None) -> bool:
    """HTMX asks for a fragment (aimed at the element `target`, when given). A history-restore
    request after a cache miss wants the whole page."""
    htmx = getattr(request, "htmx", None)
    if not htmx or htmx.history_restore_request:
        return False
    return target is None or htmx.target == target


def render_page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    fragment: str | None = None,
    *,
    target: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """The page, or its partial `fragment` when HTMX asks for it (aimed at `target`, if given)."""
    if fragment and wants_fragment(request, target):
        return render_fragment(request, f"{template}#{fragment}", context, status=status)
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def render_fragment(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    status: int = 200,
    stop_polling: bool = False,
) -> HttpResponse:
    """Only a fragment: a partial ("page.html#name") or a template of its own. The context says
    `fragment` so the fragment can carry what the page's head would (its <title>).
    `stop_polling`: the job this fragment polls has finished; this is its last answer."""
    response = render(request, template, {**context, "fragment": True}, status=status)
    patch_vary_headers(response, ["HX-Request"])
    if stop_polling:
        response.status_code = HttpResponseStopPolling.status_code
        response.reason_phrase = "Stop Polling"
    return response
