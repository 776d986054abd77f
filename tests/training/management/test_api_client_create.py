"""manage.py api_client_create NAME prints a working token once; only its hash is stored."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from groundwork.models import AuditEvent
from training.models import ApiClient
from training.selectors.deploy import token_sha256

pytestmark = pytest.mark.django_db


def create(name: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("api_client_create", name, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_command_prints_the_token_alone_and_it_opens_the_route():
    out, err = create("vllm-router")
    token = out.strip()
    assert out.count("\n") == 1 and token.startswith("t2e_")
    assert "not shown again" in err and token not in err
    client = ApiClient.objects.get(name="vllm-router")
    assert client.token_sha256 == token_sha256(token) and client.created_by is None
    assert AuditEvent.objects.filter(verb="api_client.create", actor=None).exists()
    response = Client(headers={"Authorization": f"Bearer {token}"}).get(
        "/api/v1/route", {"behaviour": "any", "subject": "x"}
    )
    assert response.status_code == 200 and response.json()["reason"] == "unknown_behaviour"


def test_two_clients_get_different_tokens_and_a_taken_name_is_refused():
    first, _ = create("proxy-a")
    second, _ = create("proxy-b")
    assert first != second
    with pytest.raises(CommandError, match="an API client named 'proxy-a' exists"):
        create("proxy-a")
    assert ApiClient.objects.count() == 2
