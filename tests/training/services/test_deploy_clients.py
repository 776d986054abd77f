"""API clients: a name people can read, refused in words when it cannot be stored."""

from __future__ import annotations

import pytest

from groundwork.access.errors import Invalid
from training.models import ApiClient
from training.services.deploy_clients import api_client_create

pytestmark = pytest.mark.django_db


def test_a_name_holding_a_nul_character_is_refused_in_words(people):
    with pytest.raises(Invalid, match="name holds a NUL character"):
        api_client_create(user=people.dave, name="litellm\x00")
    assert not ApiClient.objects.exists()


def test_a_name_is_stripped_and_stored(people):
    client, token = api_client_create(user=people.dave, name="  litellm-proxy ")
    assert client.name == "litellm-proxy" and token.startswith("t2e_")
