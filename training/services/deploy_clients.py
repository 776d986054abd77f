"""API clients: the serving infrastructure's bearer tokens. The token is shown once, at creation;
only its sha256 is stored, beside the public key a request is looked up by."""

from __future__ import annotations

import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from groundwork.access.errors import Conflict, Invalid, NotFound, require
from groundwork.services.audit import audit_event_record
from trajectories.core import limits
from trajectories.core.limits import echo

from ..models import ApiClient
from ..roles import MANAGE_API_CLIENTS
from ..selectors.deploy import TOKEN_PREFIX, token_sha256


def api_client_create(*, user: AbstractBaseUser | None, name: str) -> tuple[ApiClient, str]:
    """The new client and its token (``t2e_<key>_<secret>``), which is never readable again.
    ``user`` None: created from the command line by someone with the server's shell."""
    if user is not None:
        require(user, MANAGE_API_CLIENTS, "create API clients")
    name = name.strip()
    if not name or len(name) > 100:
        raise Invalid("name the client (up to 100 characters), e.g. the serving host")
    problem = limits.refusal("the name", name, 100)
    if problem:
        raise Invalid(problem)
    key = secrets.token_hex(6)
    token = f"{TOKEN_PREFIX}_{key}_{secrets.token_urlsafe(32)}"
    try:
        with transaction.atomic():
            client = ApiClient.objects.create(
                name=name,
                key=key,
                token_sha256=token_sha256(token),
                created_by=user if user is not None and user.is_authenticated else None,
            )
            audit_event_record(
                actor=user,
                verb="api_client.create",
                target=client,
                before=None,
                after={"name": name, "key": key},
            )
    except IntegrityError:
        raise Conflict(f"an API client named {echo(name)} exists; pick another name") from None
    return client, token


def api_client_revoke(*, user: AbstractBaseUser, client_id: int) -> ApiClient:
    """Its token stops working at the next request."""
    require(user, MANAGE_API_CLIENTS, "revoke API clients")
    with transaction.atomic():
        client = ApiClient.objects.select_for_update().filter(pk=client_id).first()
        if client is None:
            raise NotFound(f"API client {client_id} does not exist")
        if client.revoked_at is not None:
            raise Conflict(f"{client.name} is already revoked")
        client.revoked_at = timezone.now()
        client.save(update_fields=["revoked_at"])
        audit_event_record(
            actor=user,
            verb="api_client.revoke",
            target=client,
            before=None,
            after={"name": client.name, "key": client.key},
        )
    return client
