"""The deployment pages, each with and without htmx: the list, a deployment with its gate and its
actions swapped in place, refusals in words with 403/409/422, adapters, serving, API clients."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.training.factories.deploy import (
    REPAIR,
    approver_who_reviews,
    gated_world,
    held_out_behaviour,
    live,
    next_version,
    proposed,
    register,
    rollouts,
)
from training.models import Adapter, ApiClient, Deployment

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


def hx_at(d: Deployment) -> dict[str, str]:
    return {**HX, "HX-Target": f"deployment-{d.pk}"}


@pytest.fixture
def world(people):
    return gated_world(people.bob)


# -- the list ------------------------------------------------------------------------------------


def test_the_empty_list_says_what_to_do_next(client, people):
    client.force_login(people.bob)
    html = client.get("/training/deployments/").content.decode()
    assert "No deployments yet." in html and "Register an adapter first" in html
    assert 'href="/training/adapters/new/"' in html


def test_the_list_shows_each_deployment_and_its_fragment_alone_under_htmx(client, people, world):
    d = live(world.adapter, people.bob, people.carol, percent=25)
    client.force_login(people.alice)
    page = client.get("/training/deployments/")
    html = page.content.decode()
    assert "HX-Request" in page["Vary"] and "<html" in html
    assert f'<tr id="deployment-{d.pk}-row">' in html and "25% live" in html
    fragment = client.get(
        "/training/deployments/", headers={**HX, "HX-Target": "deployment-results"}
    )
    body = fragment.content.decode().strip()
    assert body.startswith('<section id="deployment-results">') and "<html" not in body


# -- a deployment --------------------------------------------------------------------------------


def test_the_deployment_page_shows_the_gate_the_numbers_and_links_to_the_rollouts(
    client, people, world
):
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    html = client.get(f"/training/deployments/{d.pk}/").content.decode()
    assert f'id="deployment-{d.pk}"' in html and "<html" in html
    assert 'id="gate-row-failing-test-repair"' in html and 'id="gate-row-read-before-edit"' in html
    assert "5 / 5" in html and "passes" in html
    assert html.count('class="chip pass"') == 20  # 5 adapter + 5 base rollouts, two behaviours
    assert f'id="approve-{d.pk}">Approve</button>' in html  # enabled: carol may approve


def test_the_gate_says_how_many_rollouts_named_the_adapter_without_its_served_digest(
    client, people, world
):
    rollouts(world.tasks[:2], "repaired", adapter=world.adapter.served_name)
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    for headers in ({}, hx_at(d)):
        html = client.get(f"/training/deployments/{d.pk}/", headers=headers).content.decode()
        assert f'id="gate-unattributed-{world.adapter.pk}">2 rollouts name the adapter' in html
        assert "unattributed, counted for neither side" in html and "5 / 5" in html


def test_the_deployment_fragment_alone_under_htmx(client, people, world):
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    response = client.get(f"/training/deployments/{d.pk}/", headers=hx_at(d))
    body = response.content.decode().strip()
    assert body.startswith(f'<div id="deployment-{d.pk}" class="deployment"')
    assert "<html" not in body and "HX-Request" in response["Vary"]


def test_approving_swaps_the_deployment_in_place_with_the_drill_recorded(client, people, world):
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    response = client.post(f"/training/deployments/{d.pk}/approve/", headers=hx_at(d))
    assert response.status_code == 200
    body = response.content.decode()
    assert body.strip().startswith(f'<div id="deployment-{d.pk}"')
    assert "Approved on the held-out gate; the kill drill ran." in body
    assert "passed: while killed, the endpoint answered the base model" in body
    assert f'id="activate-{d.pk}"' in body  # drilled, so it may be activated now
    d.refresh_from_db()
    assert d.state == Deployment.State.APPROVED


def test_the_drill_names_the_base_model_once_and_its_time_to_the_second(client, people, world):
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    body = client.post(f"/training/deployments/{d.pk}/approve/").content.decode()
    body = client.get(f"/training/deployments/{d.pk}/").content.decode()
    drill = body[body.index('class="drill"') :].split("</dd>")[0]
    assert re.search(
        r"answered the base model <code>[^<]+</code> at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", drill
    )
    Deployment.objects.filter(pk=d.pk).update(drill_model="base")  # the placeholder's name
    body = client.get(f"/training/deployments/{d.pk}/").content.decode()
    drill = body[body.index('class="drill"') :].split("</dd>")[0]
    assert "the base model at " in drill and "<code>base</code>" not in drill


def test_approving_without_htmx_redirects_to_the_page(client, people, world):
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    response = client.post(f"/training/deployments/{d.pk}/approve/", {f"pct:{REPAIR}": "5"})
    assert response.status_code == 302 and response["Location"] == f"/training/deployments/{d.pk}/"
    assert d.shares.get().ceiling == 500
    page = client.get(response["Location"]).content.decode()
    assert "Approved on the held-out gate" in page


def test_the_registrar_sees_why_they_cannot_approve_and_a_forced_post_is_refused_with_403(
    client, people
):
    frank = approver_who_reviews()
    world = gated_world(frank)
    d = proposed(world.adapter, people.bob)
    client.force_login(frank)
    html = client.get(f"/training/deployments/{d.pk}/").content.decode()
    assert "frank registered failing-test-repair-lora@1.0 and cannot approve its deployment" in html
    assert f'id="approve-{d.pk}" disabled' in html
    for headers in (hx_at(d), {}):
        refused = client.post(f"/training/deployments/{d.pk}/approve/", headers=headers)
        assert refused.status_code == 403
        assert "frank registered failing-test-repair-lora@1.0" in refused.content.decode()
    d.refresh_from_db()
    assert d.state == Deployment.State.PROPOSED


def test_a_blocked_gate_refuses_the_approval_with_409_and_its_reasons(client, people):
    world = gated_world(people.bob, adapter_kind="blind_repair")
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    html = client.get(f"/training/deployments/{d.pk}/").content.decode()
    assert "blocks" in html and "read-before-edit&#x27;s held-out tasks" in html
    refused = client.post(f"/training/deployments/{d.pk}/approve/", headers=hx_at(d))
    assert refused.status_code == 409
    assert "the held-out gate blocks" in refused.content.decode()


def test_a_percentage_that_is_not_one_is_refused_with_422(client, people, world):
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    refused = client.post(
        f"/training/deployments/{d.pk}/approve/", {f"pct:{REPAIR}": "ten"}, headers=hx_at(d)
    )
    assert refused.status_code == 422 and "is not a percentage" in refused.content.decode()


def test_activating_and_drilling_from_the_page(client, people, world):
    d = proposed(world.adapter, people.bob)
    client.force_login(people.carol)
    client.post(f"/training/deployments/{d.pk}/approve/")
    client.force_login(people.bob)
    active = client.post(f"/training/deployments/{d.pk}/activate/", headers=hx_at(d))
    assert active.status_code == 200
    assert "Active at its approved rollout; the kill drill ran again while live." in (
        active.content.decode()
    )
    drilled = client.post(f"/training/deployments/{d.pk}/drill/", headers=hx_at(d))
    assert "Kill drill passed." in drilled.content.decode()
    d.refresh_from_db()
    assert d.state == Deployment.State.ACTIVE


def test_a_missing_deployment_or_adapter_is_404(client, people):
    client.force_login(people.dave)
    assert client.get("/training/deployments/999/").status_code == 404
    assert client.post("/training/deployments/999/kill/", headers=HX).status_code == 404
    assert client.post("/training/adapters/999/propose/", {"pct:x": "1"}).status_code == 404


def test_the_kill_switch_on_the_page_kills_at_once(client, people, world):
    d = live(world.adapter, people.bob, people.carol)
    client.force_login(people.bob)
    response = client.post(f"/training/deployments/{d.pk}/kill/", headers=hx_at(d))
    assert response.status_code == 200
    assert "Killed: the route answers the base model." in response.content.decode()
    d.refresh_from_db()
    assert d.state == Deployment.State.KILLED and d.reason == "kill switch pulled by bob"


def test_raising_a_live_rollout_above_the_approval_is_refused_with_409(client, people, world):
    d = live(world.adapter, people.bob, people.carol, percent=10)
    client.force_login(people.bob)
    data = {"behaviour": REPAIR, "percentage": "20"}
    refused = client.post(f"/training/deployments/{d.pk}/percentage/", data, headers=hx_at(d))
    assert refused.status_code == 409
    assert "goes above the approved 10%: that needs a new approval" in refused.content.decode()
    ok = client.post(f"/training/deployments/{d.pk}/percentage/", {**data, "percentage": "2.5"})
    assert ok.status_code == 302 and d.shares.get().live == 250


def test_rollback_from_the_page_names_the_version_that_serves_again(client, people, world):
    first = live(world.adapter, people.bob, people.carol)
    second = live(next_version(world, people.bob, "1.1"), people.bob, people.carol)
    client.force_login(people.carol)
    html = client.get(f"/training/deployments/{second.pk}/").content.decode()
    assert f"Roll back to #{first.pk} (failing-test-repair-lora@1.0)" in html
    response = client.post(f"/training/deployments/{second.pk}/rollback/", headers=hx_at(second))
    assert response.status_code == 200
    assert f"deployment {first.pk} (failing-test-repair-lora@1.0) serves again" in (
        response.content.decode()
    )


def test_the_audit_trail_is_on_the_page(client, people, world):
    d = live(world.adapter, people.bob, people.carol)
    client.force_login(people.alice)
    html = client.get(f"/training/deployments/{d.pk}/").content.decode()
    for verb in (
        "deployment.propose",
        "deployment.approve",
        "deployment.drill",
        "deployment.activate",
    ):
        assert f'<span class="verb">{verb}</span>' in html


# -- adapters ------------------------------------------------------------------------------------


def registration(**overrides):
    data = {
        "behaviour": REPAIR,
        "name": "failing-test-repair-lora",
        "version": "2.0",
        "eval_suite": "repair-held-out",
        "base_model": "qwen-coder",
        "training_plan": "plan-9",
        "dataset_sha256": "a" * 64,
        "artifact_uri": "file:///srv/adapters/repair-2.0",
        "artifact_sha256": "b" * 64,
        "rank": "16",
    }
    return {**data, **overrides}


def test_registering_on_the_page_then_again_changes_nothing(client, people):
    held_out_behaviour(REPAIR, tasks=1)
    client.force_login(people.bob)
    form = client.get(f"/training/adapters/new/?behaviour={REPAIR}").content.decode()
    assert 'value="failing-test-repair-lora"' in form and 'value="qwen-coder"' in form
    response = client.post("/training/adapters/new/", registration())
    adapter = Adapter.objects.get()
    assert (
        response.status_code == 302 and response["Location"] == f"/training/adapters/{adapter.pk}/"
    )
    again = client.post("/training/adapters/new/", registration(), follow=True)
    assert "was already registered with this content; nothing changed" in again.content.decode()
    refused = client.post("/training/adapters/new/", registration(rank="32"))
    assert refused.status_code == 409 and "(rank differ)" in refused.content.decode()
    invalid = client.post("/training/adapters/new/", registration(version="v2"))
    assert invalid.status_code == 422
    assert "<strong>version</strong>: use N, N.N or N.N.N" in invalid.content.decode()
    assert Adapter.objects.count() == 1


def test_the_adapter_form_shows_every_field_error_at_once_and_quotes_long_values_short(
    client, people
):
    held_out_behaviour(REPAIR, tasks=1)
    client.force_login(people.bob)
    response = client.post(
        "/training/adapters/new/",
        registration(
            version="v2",
            rank="sixteen",
            dataset_sha256="nope",
            training_plan="p" * 204_800,
            artifact_uri="ftp://" + "a" * 204_800,
        ),
    )
    html = response.content.decode()
    assert response.status_code == 422 and "5 fields need fixing" in html
    for shown in (
        "<strong>version</strong>: use N, N.N or N.N.N",
        "<strong>rank</strong>: &#x27;sixteen&#x27; is not a whole number",
        "<strong>dataset sha256</strong>: must be 64 lowercase hexadecimal digits",
        "<strong>training plan</strong>: is 204,800 characters long; at most 200 are allowed",
        "<strong>artifact uri</strong>: is 204,806 characters long; at most 1,000 are allowed",
    ):
        assert shown in html
    errors = html[html.index('class="form-error"') : html.index("</ul>")]
    assert len(errors) < 2_000  # no value comes back whole in the errors
    assert 'name="version" required maxlength="20" aria-invalid="true"' in html
    assert not Adapter.objects.exists()


def test_the_adapter_page_previews_the_gate_and_proposes_a_deployment(client, people, world):
    client.force_login(people.bob)
    html = client.get(f"/training/adapters/{world.adapter.pk}/").content.decode()
    assert 'id="gate-row-failing-test-repair"' in html and 'name="pct:read-before-edit"' in html
    response = client.post(
        f"/training/adapters/{world.adapter.pk}/propose/",
        {
            f"pct:{REPAIR}": "12.5",
            "pct:read-before-edit": "0",
            "min_rollouts": "5",
            "min_pass_rate": "60",
            "tolerance": "2",
            "tokens_per_day": "5000",
        },
    )
    d = Deployment.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/training/deployments/{d.pk}/"
    assert {s.behaviour.slug: s.requested for s in d.shares.all()} == {
        REPAIR: 1250,
        "read-before-edit": 0,
    }
    assert (str(d.min_pass_rate), str(d.tolerance), d.tokens_per_day) == ("0.6000", "0.0200", 5000)


def test_a_proposal_with_a_bad_number_comes_back_with_the_form_and_422(client, people, world):
    client.force_login(people.bob)
    response = client.post(
        f"/training/adapters/{world.adapter.pk}/propose/",
        {f"pct:{REPAIR}": "10", "min_rollouts": "many"},
    )
    html = response.content.decode()
    assert response.status_code == 422 and "min rollouts: &#x27;many&#x27; is not a number" in html
    assert 'name="min_rollouts" inputmode="numeric" size="4" value="many"' in html
    assert not Deployment.objects.exists()


def test_the_adapter_list_says_what_to_do_when_empty(client, people):
    client.force_login(people.bob)
    html = client.get("/training/adapters/").content.decode()
    assert "No adapters yet." in html and "Register one" in html


# -- serving and API clients --------------------------------------------------------------------


def test_the_serving_page_and_downloads_follow_the_active_state(client, people, world):
    first = live(world.adapter, people.bob, people.carol)
    second = live(next_version(world, people.bob, "1.1"), people.bob, people.carol)
    client.force_login(people.carol)
    html = client.get("/training/serving/").content.decode()
    assert "--lora-modules" in html and "failing-test-repair-lora-v1.1" in html
    query = {"endpoint:qwen-coder": "http://gpu-1:8000/v1", "adapter_root": "/models"}
    config = yaml.safe_load(client.get("/training/serving/litellm.yaml", query).content)
    names = [m["model_name"] for m in config["model_list"]]
    # the live version, and the one a rollback would bring back, both loaded
    assert "failing-test-repair-lora-v1.1" in names and "failing-test-repair-lora-v1.0" in names
    assert {"failing-test-repair-lora-v1.1": ["qwen-coder"]} in config["router_settings"][
        "fallbacks"
    ]
    script = client.get("/training/serving/vllm.sh", query).content.decode()
    assert (
        "vllm serve qwen-coder --port 8000 --enable-lora --max-lora-rank 16 --max-loras 2 "
        "--lora-modules" in script
    )
    assert "/models/failing-test-repair-lora-v1.1" in script
    client.post(f"/training/deployments/{second.pk}/kill/")
    names = [
        m["model_name"]
        for m in yaml.safe_load(client.get("/training/serving/litellm.yaml").content)["model_list"]
    ]
    # the killed version leaves serving; the one its rollback would bring back stays
    assert "failing-test-repair-lora-v1.1" not in names
    assert "failing-test-repair-lora-v1.0" in names
    first.refresh_from_db()
    assert first.superseded_by == second


def test_an_admin_creates_an_api_client_and_sees_its_token_once(client, people):
    client.force_login(people.dave)
    response = client.post("/training/api-clients/", {"name": "litellm-proxy"})
    html = response.content.decode()
    token = html.split('<pre class="config" id="new-token">')[1].split("</pre>")[0]
    assert token.startswith("t2e_") and response["Cache-Control"] == "no-store"
    later = client.get("/training/api-clients/").content.decode()
    assert token not in later and "litellm-proxy" in later
    client.post(f"/training/api-clients/{ApiClient.objects.get().pk}/revoke/")
    assert ApiClient.objects.get().revoked_at is not None
    taken = client.post("/training/api-clients/", {"name": "litellm-proxy"})
    assert taken.status_code == 409 and "exists" in taken.content.decode()


def test_trajectory_text_is_escaped_on_the_pages(client, people):
    repair = held_out_behaviour(REPAIR, tasks=1)
    register(people.bob, repair, training_plan="<script>alert(1)</script>")
    client.force_login(people.bob)
    adapter = Adapter.objects.get()
    html = client.get(f"/training/adapters/{adapter.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_the_default_serving_files_name_no_model_called_base_and_stay_off_the_desks_port(
    client, people, world, settings
):
    settings.TRAJ2ENV_BASE_MODEL = "base"
    live(world.adapter, people.bob, people.carol)
    client.force_login(people.carol)
    script = client.get("/training/serving/vllm.sh").content.decode()
    assert "vllm serve base" not in script and "--served-model-name base" in script
    assert "TRAJ2ENV_BASE_MODEL" in script
    assert ":8000" not in script and "--port 8000" not in script
    config = yaml.safe_load(client.get("/training/serving/litellm.yaml").content)
    bases = {m["litellm_params"]["api_base"] for m in config["model_list"]}
    assert bases and not any(":8000/" in url for url in bases)
