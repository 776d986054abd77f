"""A NUL character in a request's query string or form fields is refused at the door, before
any view filters or looks a row up by it. PostgreSQL takes no NUL in a query parameter or a text
column, so ``?q=%00`` on a list page, or a behaviour named ``x%00`` in the export form, answered
500 there; no address or form the site makes holds one. The refusal is ``BadQuery``, a 400 that
``project.views.bad_request`` answers as a page with the navigation (or JSON under ``/api/``).

The API's bodies are left to its views: a kill goes through whatever its body holds
(``training.views.api``), and its JSON is read strictly, a NUL refused with the rest.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, QueryDict

NUL = "\x00"
_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


class BadQuery(SuspiciousOperation):
    """A query string or form no page can use; its message is a sentence to show."""


def holds_nul(fields: QueryDict) -> bool:
    return any(
        NUL in key or any(NUL in value for value in values) for key, values in fields.lists()
    )


class RefuseNulInQuery:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if holds_nul(request.GET):
            raise BadQuery("the address holds a NUL character (%00), which no page or filter takes")
        if (
            request.method == "POST"
            and request.content_type in _FORMS
            and not request.path.startswith("/api/")
            and holds_nul(request.POST)
        ):
            raise BadQuery("the form holds a NUL character (code 0), which no field takes")
        return self.get_response(request)
