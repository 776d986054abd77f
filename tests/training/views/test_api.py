"""The API serving infrastructure calls: the route answers the base model with 200 on every fault,
the database unavailable included; only a missing or wrong token is refused with 401. The kill
switch and usage reports take the same token."""

from __future__ import annotations

import json
import os
from decimal import Decimal

import pytest
from django.db import OperationalError, connection
from django.test import Client

from groundwork.models import AuditEvent
from tests.training.factories.deploy import (
    REPAIR,
    gated_world,
    live,
    next_version,
    proposed,
    register,
)
from training.core.deploy.bucketing import bucket, subject_inside
from training.models import ApiClient, Deployment, DeploymentShare
from training.selectors import deploy as reads
from training.services import deploy
from training.services.deploy_clients import api_client_create, api_client_revoke

pytestmark = pytest.mark.django_db
INSIDE = subject_inside(REPAIR, 1000)
OUTSIDE = next(f"repo-{n}" for n in range(1000) if bucket(REPAIR, f"repo-{n}") >= 1000)


@pytest.fixture
def token(people):
    _client, token = api_client_create(user=people.dave, name="litellm-proxy")
    return token


@pytest.fixture
def api(token):
    # CSRF checks on: the API must not need a cookie-bound token.
    return Client(enforce_csrf_checks=True, headers={"Authorization": f"Bearer {token}"})


@pytest.fixture
def serving(people):
    world = gated_world(people.bob)
    return world, live(world.adapter, people.bob, people.carol)


def route(api, behaviour=REPAIR, subject=INSIDE):
    response = api.get("/api/v1/route", {"behaviour": behaviour, "subject": subject})
    assert response.status_code == 200, response.content
    return response.json()


# -- the token -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Basic dXNlcjpwdw==",
        "Bearer ",
        "Bearer not-a-token",
        "Bearer t2e_000000000000_wrong",
    ],
)
def test_a_missing_or_wrong_token_is_refused_with_401(token, header):
    headers = {"Authorization": header} if header is not None else {}
    response = Client(headers=headers).get("/api/v1/route", {"behaviour": REPAIR})
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert "Bearer <token>" in response.json()["error"]


def test_the_right_key_with_a_wrong_secret_is_refused_after_a_constant_time_compare(
    token, monkeypatch
):
    compared = []
    real = reads.hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(reads.hmac, "compare_digest", spy)
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    response = Client(headers={"Authorization": f"Bearer {forged}"}).get("/api/v1/route")
    assert response.status_code == 401
    stored = ApiClient.objects.get().token_sha256
    assert compared == [(stored, reads.token_sha256(forged))]


def test_a_revoked_token_stops_working(people, api, token):
    assert route(api)["reason"] == "unknown_behaviour"
    api_client_revoke(user=people.dave, client_id=ApiClient.objects.get().pk)
    assert api.get("/api/v1/route", {"behaviour": REPAIR}).status_code == 401


def test_only_the_tokens_hash_is_stored(token):
    client = ApiClient.objects.get()
    assert token.startswith(f"t2e_{client.key}_")
    assert client.token_sha256 == reads.token_sha256(token) and token not in client.token_sha256


# -- the answers ---------------------------------------------------------------------------------


def test_a_subject_inside_the_rollout_gets_the_adapter_and_one_outside_the_base_model(api, serving):
    world, d = serving
    assert route(api) == {
        "model": "failing-test-repair-lora-v1.0",
        "adapter": "failing-test-repair-lora",
        "version": "1.0",
        "deployment": str(d.pk),
        "reason": "adapter",
    }
    assert route(api, subject=OUTSIDE) == {
        "model": "qwen-coder",
        "adapter": None,
        "version": None,
        "deployment": str(d.pk),
        "reason": "outside_rollout",
    }
    assert route(api, subject="")["reason"] == "no_subject"


def test_an_unknown_behaviour_answers_the_default_base_model(api, serving, settings):
    settings.TRAJ2ENV_BASE_MODEL = "house-model"
    answer = route(api, behaviour="no-such-behaviour")
    assert answer == {
        "model": "house-model",
        "adapter": None,
        "version": None,
        "deployment": None,
        "reason": "unknown_behaviour",
    }
    assert route(api, behaviour="")["model"] == "house-model"


def test_a_behaviour_without_a_base_model_of_its_own_answers_the_setting(api, serving, settings):
    world, _ = serving
    settings.TRAJ2ENV_BASE_MODEL = "house-model"
    world.read.base_model = ""
    world.read.save()
    assert route(api, behaviour="read-before-edit") == {
        "model": "house-model",
        "adapter": None,
        "version": None,
        "deployment": None,
        "reason": "no_deployment",
    }


def test_killed_rolled_back_and_retired_deployments_answer_the_base_model_with_the_reason(
    people, api, serving
):
    world, d = serving
    deploy.deployment_kill(user=people.bob, deployment_id=d.pk, reason="incident")
    assert route(api) == {
        "model": "qwen-coder",
        "adapter": None,
        "version": None,
        "deployment": str(d.pk),
        "reason": "killed",
    }
    deploy.deployment_retire(user=people.bob, deployment_id=d.pk, reason="done")
    assert route(api)["reason"] == "retired"


def test_a_proposed_or_approved_deployment_is_not_served_yet(people, api):
    world = gated_world(people.bob)
    d = proposed(world.adapter, people.bob, 100)
    assert route(api)["reason"] == "not_active"
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    answer = route(api)
    assert (answer["model"], answer["reason"], answer["deployment"]) == (
        "qwen-coder",
        "not_active",
        str(d.pk),
    )


def test_the_database_unavailable_answers_the_base_model_with_200(api, serving, settings):
    settings.TRAJ2ENV_BASE_MODEL = "house-model"

    def refuse_the_snapshot(execute, sql, params, many, context):
        if "training_behaviour" in sql:
            raise OperationalError("database is locked")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(refuse_the_snapshot):
        answer = route(api)
    assert answer == {
        "model": "house-model",
        "adapter": None,
        "version": None,
        "deployment": None,
        "reason": "error",
    }


def test_a_database_that_cannot_even_check_the_token_still_answers_the_base_model(
    api, serving, settings
):
    settings.TRAJ2ENV_BASE_MODEL = "house-model"

    def down(execute, sql, params, many, context):
        raise OperationalError("unable to open database file")

    with connection.execute_wrapper(down):
        answer = route(api)
    assert (answer["model"], answer["reason"]) == ("house-model", "error")


def test_an_inconsistent_state_answers_the_base_model_rather_than_failing(people, api, serving):
    world, d = serving
    # Two active deployments on one behaviour: the services never write this, a hand edit might.
    other = Deployment.objects.create(
        adapter=register(people.bob, world.repair, "2.0"),
        proposed_by=people.bob,
        state=Deployment.State.ACTIVE,
    )
    DeploymentShare.objects.create(deployment=other, behaviour=world.repair, live=10_000)
    answer = route(api)
    assert (answer["model"], answer["adapter"], answer["reason"]) == ("qwen-coder", None, "error")


def test_the_route_reads_two_indexed_queries_and_no_session(
    api, serving, django_assert_num_queries
):
    with django_assert_num_queries(2):  # the token's client, then the behaviour's snapshot
        response = api.get("/api/v1/route", {"behaviour": REPAIR, "subject": INSIDE})
    assert response.status_code == 200
    assert "sessionid" not in response.cookies and "csrftoken" not in response.cookies


# -- kill and usage ------------------------------------------------------------------------------


def test_the_kill_call_flips_the_route_to_the_base_model(api, serving):
    world, d = serving
    assert route(api)["adapter"] == "failing-test-repair-lora"
    response = api.post(
        f"/api/v1/deployments/{d.pk}/kill",
        json.dumps({"reason": "pager: wrong answers"}),
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json() == {
        "deployment": str(d.pk),
        "state": "killed",
        "reason": "pager: wrong answers",
    }
    assert route(api)["reason"] == "killed"
    event = AuditEvent.objects.filter(verb="deployment.kill").get()
    assert event.actor is None and event.after["api_client"] == "litellm-proxy"


def test_the_kill_call_needs_the_token_and_a_deployment_that_can_be_killed(people, api, serving):
    world, d = serving
    assert Client().post(f"/api/v1/deployments/{d.pk}/kill").status_code == 401
    assert api.post("/api/v1/deployments/999/kill").status_code == 404
    deploy.deployment_retire(user=people.bob, deployment_id=d.pk, reason="done")
    refused = api.post(f"/api/v1/deployments/{d.pk}/kill")
    assert refused.status_code == 409 and "serves nothing" in refused.json()["error"]
    d.refresh_from_db()
    assert d.state == Deployment.State.RETIRED


def test_a_usage_report_that_crosses_the_cap_kills_the_deployment(people, api):
    world = gated_world(people.bob)
    d = deploy.deployment_propose(
        user=people.bob,
        adapter_id=world.adapter.pk,
        percentages={REPAIR: 1000},
        money_per_day=Decimal("1.00"),
    )
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    deploy.deployment_activate(user=people.bob, deployment_id=d.pk)

    def report(cost):
        body = json.dumps({"deployment": d.pk, "tokens": 1200, "cost": cost})
        return api.post("/api/v1/usage", body, content_type="application/json")

    first = report("0.60")
    assert first.status_code == 200 and first.json()["tripped"] is False
    assert route(api)["reason"] == "adapter"
    second = report(0.45)  # a JSON number: read as the decimal it was written as
    assert second.status_code == 200
    assert second.json()["tripped"] is True and second.json()["cost"] == "1.05"
    assert "money: 1.05 spent of 1.00 per day" in second.json()["reason"]
    assert route(api)["reason"] == "killed"


def test_a_usage_report_that_makes_no_sense_is_refused_with_422(api, serving):
    world, d = serving
    for body in ({"deployment": d.pk, "tokens": -1}, {"deployment": "x"}, [1, 2]):
        response = api.post("/api/v1/usage", json.dumps(body), content_type="application/json")
        assert response.status_code == 422, body
    late = {"deployment": d.pk, "tokens": 1, "at": "2026-11-29T23:59:00"}
    response = api.post("/api/v1/usage", json.dumps(late), content_type="application/json")
    assert response.status_code == 422 and "offset" in response.json()["error"]
    assert Client().post("/api/v1/usage", {"deployment": d.pk}).status_code == 401


@pytest.mark.parametrize(
    "fields",
    [
        {"tokens": 10**30},
        {"tokens": 2**63},
        {"cost": "1e30"},
        {"tokens": 1, "at": "9999-12-31T23:59:59-23:59"},
    ],
)
def test_usage_no_day_can_hold_is_refused_with_422(api, serving, fields):
    world, d = serving
    body = json.dumps({"deployment": d.pk, **fields})
    response = api.post("/api/v1/usage", body, content_type="application/json")
    assert response.status_code == 422
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]


def test_usage_that_would_overflow_the_days_count_is_refused_and_the_count_kept(api, serving):
    world, d = serving
    body = json.dumps({"deployment": d.pk, "tokens": 2**63 - 1})
    assert api.post("/api/v1/usage", body, content_type="application/json").status_code == 200
    again = api.post("/api/v1/usage", body, content_type="application/json")
    assert again.status_code == 422 and "at most" in again.json()["error"]
    assert d.usage.get().tokens == 2**63 - 1


@pytest.mark.parametrize(
    "body",
    ["[" * 100_000 + "]" * 100_000, '{"deployment": ' * 50_000, "x" * 3_000_000],
    ids=["deep", "deep-and-cut", "3MB"],
)
def test_a_usage_body_too_deep_or_too_large_is_refused_in_json(api, serving, body):
    response = api.post("/api/v1/usage", body, content_type="application/json")
    assert 400 <= response.status_code < 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"reason": ', "application/json"),
        ("[" * 100_000 + "]" * 100_000, "application/json"),
        ('["incident"]', "application/json"),
        ('{"reason": "x' + "x" * 3_000_000 + '"}', "application/json"),
        ("reason=" + "x" * 3_000_000, "application/x-www-form-urlencoded"),
        (b"\xff\xfe{}", "application/json"),
        ("&".join(f"f{n}=1" for n in range(2000)), "application/x-www-form-urlencoded"),
        ("--x\r\nbroken", "multipart/form-data"),
        ('{"reason": "\\ud800"}', "application/json"),
    ],
    ids=[
        "malformed",
        "deep",
        "not-an-object",
        "3MB-json",
        "3MB-form",
        "not-utf8",
        "2000-fields",
        "multipart-without-boundary",
        "lone-surrogate",
    ],
)
def test_the_kill_call_kills_whatever_its_body_says(api, serving, body, content_type):
    world, d = serving
    response = api.post(f"/api/v1/deployments/{d.pk}/kill", body, content_type=content_type)
    assert response.status_code == 200, response.content[:200]
    answer = response.json()
    assert answer["state"] == "killed" and answer["reason"].startswith("kill switch pulled")
    assert answer["ignored"]  # says why the body's reason was not used
    d.refresh_from_db()
    assert d.state == Deployment.State.KILLED
    assert route(api)["reason"] == "killed"


def test_a_kill_reason_that_is_not_text_is_ignored_and_the_kill_goes_through(api, serving):
    world, d = serving
    body = json.dumps({"reason": {"nested": ["x"]}})
    response = api.post(f"/api/v1/deployments/{d.pk}/kill", body, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["reason"].startswith("kill switch pulled")
    assert "reason" in response.json()["ignored"]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"reason": "bad answers\\u0000"}', "application/json"),
        ("reason=bad+answers%00", "application/x-www-form-urlencoded"),
        ("reason=%00", "application/x-www-form-urlencoded"),
    ],
    ids=["json-escape", "form", "form-only-nul"],
)
def test_a_kill_reason_holding_a_nul_character_still_kills_and_stores_none(
    api, serving, body, content_type
):
    # PostgreSQL stores no NUL in a text column: storing one failed the kill with a 500 there.
    world, d = serving
    response = api.post(f"/api/v1/deployments/{d.pk}/kill", body, content_type=content_type)
    assert response.status_code == 200, response.content[:200]
    d.refresh_from_db()
    assert d.state == Deployment.State.KILLED and d.reason
    assert "\x00" not in d.reason
    assert "\x00" not in json.dumps(AuditEvent.objects.filter(verb="deployment.kill").get().after)


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_the_route_answers_other_methods_405_in_json(api, serving, method):
    response = getattr(api, method)("/api/v1/route", {"behaviour": REPAIR})
    assert response.status_code == 405
    assert response["Allow"] == "GET"
    assert "GET" in response.json()["error"]


def test_kill_and_usage_answer_get_405_in_json(api, serving):
    world, d = serving
    for url in (f"/api/v1/deployments/{d.pk}/kill", "/api/v1/usage"):
        response = api.get(url)
        assert response.status_code == 405 and response["Allow"] == "POST"
        assert "POST" in response.json()["error"]


def test_when_nothing_serves_the_route_names_the_deployment_stopped_last(people, api, serving):
    # The story: deployment 1 killed by hand, a later one killed by its budget cap; the
    # route named deployment 1 (the first row of its query) as why the base model answers.
    world, first = serving
    deploy.deployment_kill(user=people.bob, deployment_id=first.pk, reason="incident")
    second = live(next_version(world, people.bob, "2.0"), people.bob, people.carol)
    assert route(api)["deployment"] == str(second.pk)
    retired_between = proposed(next_version(world, people.bob, "2.5"), people.bob)
    deploy.deployment_retire(user=people.bob, deployment_id=retired_between.pk, reason="no")
    third = deploy.deployment_propose(
        user=people.bob,
        adapter_id=next_version(world, people.bob, "3.0").pk,
        percentages={REPAIR: 1000},
        money_per_day=Decimal("1.00"),
    )
    deploy.deployment_approve(user=people.carol, deployment_id=third.pk)
    deploy.deployment_activate(user=people.bob, deployment_id=third.pk)
    body = json.dumps({"deployment": third.pk, "tokens": 1, "cost": "1.00"})
    assert api.post("/api/v1/usage", body, content_type="application/json").json()["tripped"]
    answer = route(api)
    assert (answer["deployment"], answer["reason"]) == (str(third.pk), "killed")


def test_a_locked_database_answers_the_base_model_well_under_a_second():
    # In a pytest process of its own: an exclusive SQLite lock waits for every other connection
    # to the file, and a live server an earlier test of this process started keeps one open.
    import os
    import subprocess
    import sys

    if connection.vendor != "sqlite":
        pytest.skip("holds SQLite's file lock from another connection")
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            f"{__file__}::test_locked_database_in_a_process_of_its_own",
        ],
        env={**os.environ, "TRAJ2ENV_LOCK_TEST": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert "1 passed" in ran.stdout


@pytest.mark.skipif(
    not os.environ.get("TRAJ2ENV_LOCK_TEST"), reason="run by the test above, in its own process"
)
@pytest.mark.django_db(transaction=True)
def test_locked_database_in_a_process_of_its_own(people, settings):
    import sqlite3
    import threading
    import time

    if connection.vendor != "sqlite":
        pytest.skip("holds SQLite's file lock from another connection")
    settings.TRAJ2ENV_BASE_MODEL = "house-model"
    _client, token = api_client_create(user=people.dave, name="proxy")
    api = Client(headers={"Authorization": f"Bearer {token}"})
    assert api.get("/api/v1/route", {"behaviour": REPAIR}).status_code == 200
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock():
        other = sqlite3.connect(connection.settings_dict["NAME"], timeout=5)
        other.execute("PRAGMA locking_mode=EXCLUSIVE")
        other.execute("BEGIN EXCLUSIVE")
        other.execute("CREATE TABLE IF NOT EXISTS held_lock (x)")
        locked.set()
        release.wait(30)
        other.rollback()
        other.close()

    connection.close()  # an exclusive lock waits for no other connection to hold the file
    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert locked.wait(10), "the exclusive lock could not be taken"
        started = time.monotonic()
        response = api.get("/api/v1/route", {"behaviour": REPAIR, "subject": INSIDE})
        took = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    assert response.status_code == 200
    assert (response.json()["model"], response.json()["reason"]) == ("house-model", "error")
    assert took < 1
