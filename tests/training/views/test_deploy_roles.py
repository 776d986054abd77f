"""Every deployment URL against every role: alice annotates, bob reviews, carol approves, dave
administers, eve has no role; an anonymous visitor is sent to log in, and the API answers 401 to
anyone without a token, logged in or not."""

from __future__ import annotations

import pytest

from tests.training.factories.deploy import gated_world, proposed

pytestmark = pytest.mark.django_db

PEOPLE = ("alice", "bob", "carol", "dave", "eve", None)
SEE = {"alice", "bob", "carol", "dave"}  # view_training
PROPOSERS = {"bob", "dave"}  # register_adapter, propose_deployment
APPROVERS = {"carol"}  # approve_deployment
OPERATORS = {"bob", "carol", "dave"}  # kill, roll back, activate, drill, retire
ADMINS = {"dave"}  # manage_api_clients


@pytest.fixture
def world(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "GATE_MIN_ROLLOUTS": 1}  # one task is enough here
    world = gated_world(people.bob, tasks=1)
    d = proposed(world.adapter, people.bob, min_rollouts=1)
    return {"adapter": world.adapter.pk, "deployment": d.pk}


MATRIX = [
    ("get", "/training/deployments/", None, SEE, 200),
    ("get", "/training/deployments/{deployment}/", None, SEE, 200),
    ("post", "/training/deployments/{deployment}/approve/", {}, APPROVERS, 302),
    ("post", "/training/deployments/{deployment}/kill/", {}, OPERATORS, 302),
    ("post", "/training/deployments/{deployment}/retire/", {}, OPERATORS, 302),
    ("get", "/training/adapters/", None, SEE, 200),
    ("get", "/training/adapters/new/", None, PROPOSERS, 200),
    ("get", "/training/adapters/{adapter}/", None, SEE, 200),
    (
        "post",
        "/training/adapters/{adapter}/propose/",
        {"pct:failing-test-repair": "5"},
        PROPOSERS,
        302,
    ),
    ("get", "/training/serving/", None, SEE, 200),
    ("get", "/training/serving/litellm.yaml", None, SEE, 200),
    ("get", "/training/api-clients/", None, ADMINS, 200),
    ("post", "/training/api-clients/", {"name": "proxy"}, ADMINS, 200),
]


@pytest.mark.parametrize("who", PEOPLE, ids=lambda w: w or "anonymous")
@pytest.mark.parametrize(
    ("method", "url", "data", "allowed", "ok"),
    MATRIX,
    ids=[f"{m.upper()} {u}" for m, u, *_ in MATRIX],
)
def test_role_matrix(client, people, world, who, method, url, data, allowed, ok):
    if who:
        client.force_login(getattr(people, who))
    response = getattr(client, method)(url.format(**world), data)
    if who is None:
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    else:
        assert response.status_code == (ok if who in allowed else 403), response.content[:300]


@pytest.mark.parametrize("who", PEOPLE, ids=lambda w: w or "anonymous")
def test_a_login_is_not_an_api_token(client, people, world, who):
    if who:
        client.force_login(getattr(people, who))
    assert client.get("/api/v1/route", {"behaviour": "failing-test-repair"}).status_code == 401
    assert client.post(f"/api/v1/deployments/{world['deployment']}/kill").status_code == 401
    assert client.post("/api/v1/usage", {"deployment": world["deployment"]}).status_code == 401


def test_the_deployments_link_in_the_top_bar_follows_the_role(client, people, world):
    client.force_login(people.carol)
    html = client.get("/training/deployments/").content.decode()
    assert '<a href="/training/deployments/" aria-current="page">Deployments</a>' in html
    assert ">API clients</a>" not in html
    client.force_login(people.dave)
    assert ">API clients</a>" in client.get("/training/deployments/").content.decode()
    client.force_login(people.eve)
    assert ">Deployments</a>" not in client.get("/trajectories/").content.decode()
