"""A NUL character in a request's query string is refused at the door, before any view filters
by it. PostgreSQL takes no NUL in a query parameter, so ``?q=%00`` on a list page answered 500
there; no address the site makes holds one. The refusal is ``BadQuery``, a 400 that
``project.views.bad_request`` answers as a page with the navigation (or JSON under ``/api/``).
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse

NUL = "\x00"


class BadQuery(SuspiciousOperation):
    """A query string no page can use; its message is a sentence to show."""


def holds_nul(request: HttpRequest) -> bool:
    return any(
        NUL in key or any(NUL in value for value in values) for key, values in request.GET.lists()
    )


class RefuseNulInQuery:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if holds_nul(request):
            raise BadQuery("the address holds a NUL character (%00), which no page or filter takes")
        return self.get_response(request)
