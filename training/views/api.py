"""The API serving infrastructure calls with a bearer token: which model answers a behaviour for a
subject, usage reports against the budget cap, and the kill switch.

No login, no session, no CSRF (a token is not a cookie a browser sends by itself). Every view
here is csrf_exempt for that reason: none reads a cookie or the session, so a forged cross-site
request carries no credential; without the exemption the CSRF middleware answered a POST to the
route with its HTML 403 page before the method check could say 405. The route
answers 200 with the base model on every fault, including a database it cannot read; only a
missing or wrong token is refused, with 401.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from groundwork.access.errors import Invalid, Refused, status_of
from training.core.deploy.route import Reason, RouteAnswer
from trajectories.core.formats.jsonl import StrictJSONError, loads_strict
from trajectories.core.limits import storable

from ..models import ApiClient
from ..selectors.deploy import api_client_for, route_answer, route_reads
from ..services.deploy import deployment_kill
from ..services.deploy_usage import usage_report

log = logging.getLogger(__name__)
View = Callable[..., HttpResponse]
# A kill reason is a line in the audit log and on the page, not a document.
REASON_CHARS = 2000


def _unauthorized() -> JsonResponse:
    response = JsonResponse(
        {"error": "send a valid API client token as 'Authorization: Bearer <token>'"}, status=401
    )
    response["WWW-Authenticate"] = 'Bearer realm="traj2env"'
    return response


def _client(request: HttpRequest) -> ApiClient | None:
    return api_client_for(request.headers.get("Authorization", ""))


def _methods(*allowed: str) -> Callable[[View], View]:
    """Django's require_http_methods answering in JSON, as serving clients read every answer."""

    def decorate(view: View) -> View:
        @wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in allowed:
                response = JsonResponse(
                    {"error": f"{request.method} is not allowed here; use {' or '.join(allowed)}"},
                    status=405,
                )
                response["Allow"] = ", ".join(allowed)
                return response
            return view(request, *args, **kwargs)

        return csrf_exempt(login_not_required(checked))

    return decorate


def _refused(error: Exception) -> JsonResponse:
    return JsonResponse({"error": str(error)}, status=status_of(error))


@_methods("GET")
def route(request: HttpRequest) -> HttpResponse:
    if not request.headers.get("Authorization"):
        return _unauthorized()
    try:
        with route_reads():  # a locked database answers the base model at once, not in 20 s
            client = _client(request)
            if client is None:
                return _unauthorized()
            answer = route_answer(request.GET.get("behaviour", ""), request.GET.get("subject", ""))
    except Exception:
        # The token cannot be checked without the database, and refusing would break serving:
        # the base model is the one answer that is safe to give anyone.
        log.exception("route: API clients unreadable")
        return JsonResponse(
            RouteAnswer(model=settings.TRAJ2ENV_BASE_MODEL, reason=Reason.ERROR).to_dict()
        )
    return JsonResponse(answer.to_dict())


def _body(request: HttpRequest) -> dict[str, Any]:
    """A JSON object, or the form fields; numbers with a fraction stay exact as Decimal."""
    try:
        if request.content_type == "application/json":
            data = loads_strict(request.body or b"{}", max_depth=8, parse_float=Decimal)
            if not isinstance(data, dict):
                raise Invalid("the body must be a JSON object")
            return data
        return request.POST.dict()
    except StrictJSONError as error:
        raise Invalid(f"the body is not a JSON object to read: {error}") from None
    except RequestDataTooBig:
        raise Invalid(
            f"the body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes"
        ) from None
    except (SuspiciousOperation, MultiPartParserError) as error:  # too many fields, bad multipart
        raise Invalid(f"the body's form cannot be read: {error}") from None


def _kill_reason(request: HttpRequest) -> tuple[str, str]:
    """The body's reason and "", or "" and why the body was not used. Never raises: the reason is
    optional, and no body (too large, not JSON, nested past reading) may keep a kill from
    happening."""
    try:
        reason = _body(request).get("reason")
    except Invalid as error:
        return "", str(error)
    if reason is not None and not isinstance(reason, str):
        return "", f"the reason must be text, not {type(reason).__name__}"
    return storable(reason or "").strip()[:REASON_CHARS], ""


@_methods("POST")
def kill(request: HttpRequest, pk: int) -> HttpResponse:
    client = _client(request)
    if client is None:
        return _unauthorized()
    reason, ignored = _kill_reason(request)
    try:
        d = deployment_kill(
            client=client,
            deployment_id=pk,
            reason=reason or f"kill switch pulled by API client {client.name}",
        )
    except Refused as error:
        return _refused(error)
    answer = {"deployment": str(d.pk), "state": d.state, "reason": d.reason}
    return JsonResponse(answer | ({"ignored": f"body ignored: {ignored}"} if ignored else {}))


@_methods("POST")
def usage(request: HttpRequest) -> HttpResponse:
    client = _client(request)
    if client is None:
        return _unauthorized()
    try:
        data = _body(request)
        deployment = _integer(data.get("deployment"), "deployment")
        tokens = _integer(data.get("tokens", 0), "tokens")
        cost = _decimal(data.get("cost", 0))
        at = _time(data.get("at"))
        check = usage_report(
            client=client, deployment_id=deployment, tokens=tokens, money=cost, at=at
        )
    except Refused as error:
        return _refused(error)
    return JsonResponse(
        {
            "deployment": str(deployment),
            "day": check.usage.day.isoformat(),
            "tokens": check.usage.tokens,
            "cost": str(check.usage.money),
            "exceeded": check.exceeded,
            "tripped": check.tripped,
            "reason": check.reason,
        }
    )


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise Invalid(f"{name} must be a whole number")
    try:
        number = int(str(value))
    except ValueError:
        raise Invalid(f"{name} must be a whole number, not {value!r}") from None
    return number


def _decimal(value: Any) -> Decimal:
    if isinstance(value, bool | float):  # floats cannot carry cents exactly
        raise Invalid("cost must be a decimal number")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise Invalid(f"cost must be a decimal number, not {value!r}") from None
    return amount


def _time(value: Any) -> datetime:
    if value in (None, ""):
        return timezone.now()
    try:
        at = datetime.fromisoformat(str(value))
    except ValueError:
        raise Invalid(f"at must be an ISO 8601 time with its offset, not {value!r}") from None
    if at.tzinfo is None:
        raise Invalid("at must carry its offset (e.g. 2026-11-29T23:59:00+00:00)")
    return at
