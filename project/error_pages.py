"""The one error Django answers with no page of its own: 405, an empty body when a POST-only
address is opened in the browser (a refreshed or bookmarked form target, "Review next" typed
in). Pages get the site's 405 page with its navigation and the way back; the API's 405s are
JSON already (``training.views.api``) and are left alone, as is any 405 that has a body.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


class NotAllowedPage:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 405 or response.content or request.path.startswith("/api/"):
            return response
        page = render(request, "405.html", {"method": request.method}, status=405)
        page["Allow"] = response.get("Allow", "")
        return page
