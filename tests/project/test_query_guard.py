"""A NUL character in a query string or a page's form is a 400 at the door: PostgreSQL takes
none in a query parameter, so every list page's filter answered 500 there with ``?q=%00``, as
did the export and adapter forms looking a behaviour up by a name holding one."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.project.test_error_pages import has_navigation
from tests.training.factories import make_behaviour
from training.models import Adapter, TrainingExport
from training.services.deploy_clients import api_client_create

pytestmark = pytest.mark.django_db


@override_settings(DEBUG=False)
@pytest.mark.parametrize(
    "address",
    [
        "/trajectories/?q=%00",
        "/trajectories/?model=qwen%00",
        "/review/?family=%00",
        "/review/?reviewer=bob%00",
        "/training/rollouts/?agent=%00",
        "/training/labels/?behaviour=%00",
        "/trajectories/?%00=1",
    ],
)
def test_a_nul_in_the_query_is_refused_with_the_sites_400_page(client, people, address):
    client.raise_request_exception = False
    client.force_login(people.dave)
    response = client.get(address)
    assert response.status_code == 400
    html = response.content.decode()
    assert "<title>Bad request · traj2env</title>" in html and has_navigation(html)
    assert "NUL character (%00)" in html


def test_the_same_filters_without_a_nul_answer_as_before(client, people):
    client.force_login(people.dave)
    assert client.get("/trajectories/?q=pytest").status_code == 200
    assert client.get("/review/?family=repair").status_code == 200


@override_settings(DEBUG=False)
def test_an_api_client_gets_the_refusal_in_json(people):
    from django.test import Client

    _client, token = api_client_create(user=people.dave, name="litellm-proxy")
    api = Client(headers={"Authorization": f"Bearer {token}"})
    api.raise_request_exception = False
    response = api.get("/api/v1/route", {"behaviour": "failing-test-repair\x00", "subject": "a"})
    assert response.status_code == 400
    assert response.json() == {
        "error": "the address holds a NUL character (%00), which no page or filter takes"
    }


@override_settings(DEBUG=False)
@pytest.mark.parametrize(
    ("address", "form"),
    [
        ("/training/exports/", {"behaviour": "failing-test-repair\x00", "kind": "sft"}),
        ("/training/adapters/new/", {"name": "lora", "behaviour": "failing-test-repair\x00"}),
        ("/training/exports/", {"behaviour": "failing-test-repair", "kind\x00": "sft"}),
    ],
    ids=["export-behaviour", "adapter-behaviour", "a-field-name"],
)
def test_a_nul_in_a_pages_form_is_refused_with_the_400_page_and_nothing_made(
    client, people, address, form
):
    make_behaviour()
    client.raise_request_exception = False
    client.force_login(people.dave)
    response = client.post(address, form)
    assert response.status_code == 400
    html = response.content.decode()
    assert "NUL character (code 0)" in html and has_navigation(html)
    assert not TrainingExport.objects.exists() and not Adapter.objects.exists()
