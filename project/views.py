"""Project-wide pages that belong to no app: the throttled login, and the 400 page."""

from __future__ import annotations

import math
from typing import Any

from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from project import login_throttle
from project.query_guard import BadQuery


class ThrottledLoginView(LoginView):
    """Django's login, refusing with 429 (before checking the password) while the username or
    the client's address is cooling off after too many failures."""

    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = _username(request)
        wait = login_throttle.seconds_refused(username=username, address=_address(request))
        if wait:
            form = AuthenticationForm(request, initial={"username": username})
            context = self.get_context_data(form=form, refused_minutes=math.ceil(wait / 60))
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        login_throttle.succeeded(username=_username(self.request))
        return super().form_valid(form)

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        login_throttle.failed(username=_username(self.request), address=_address(self.request))
        return super().form_invalid(form)


def _username(request: HttpRequest) -> str:
    return request.POST.get("username", "")


def _address(request: HttpRequest) -> str:
    # The peer's address, never X-Forwarded-For: a client writes that header itself.
    return request.META.get("REMOTE_ADDR", "")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler400: the site's page with its navigation, or JSON for an API client.
    Only our own refusals are quoted; Django's may name settings a user cannot act on."""
    why = str(exception) if isinstance(exception, BadQuery) else ""
    if request.path.startswith("/api/"):
        return JsonResponse({"error": why or "the request cannot be read"}, status=400)
    return render(request, "400.html", {"why": why}, status=400)
