"""Usage reports add up per deployment and UTC day; the report that reaches the cap kills the
deployment by itself, with the reason, in the same transaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from groundwork.access.errors import Invalid, NotFound
from groundwork.models import AuditEvent
from tests.training.factories.deploy import REPAIR, gated_world, live
from training.core.deploy.bucketing import subject_inside
from training.models import Deployment, DeploymentUsage
from training.selectors.deploy import route_answer
from training.services import deploy
from training.services.deploy_clients import api_client_create
from training.services.deploy_usage import usage_report

pytestmark = pytest.mark.django_db
SUBJECT = subject_inside(REPAIR, 1000)


@pytest.fixture
def client_row(people):
    client, _token = api_client_create(user=people.dave, name="litellm-proxy")
    return client


@pytest.fixture
def capped(people):
    world = gated_world(people.bob)
    d = deploy.deployment_propose(
        user=people.bob,
        adapter_id=world.adapter.pk,
        percentages={REPAIR: 1000},
        tokens_per_day=1000,
        money_per_day=Decimal("2.50"),
    )
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    return deploy.deployment_activate(user=people.bob, deployment_id=d.pk)


def report(client_row, d, tokens=0, money="0", at=None):
    return usage_report(
        client=client_row,
        deployment_id=d.pk,
        tokens=tokens,
        money=Decimal(money),
        at=at or timezone.now(),
    )


def test_reports_add_up_and_the_one_reaching_the_cap_kills_the_deployment(capped, client_row):
    first = report(client_row, capped, tokens=600, money="1.00")
    assert not first.tripped and route_answer(REPAIR, SUBJECT).adapter is not None
    second = report(client_row, capped, tokens=400)
    assert second.tripped and second.usage.tokens == 1000
    capped.refresh_from_db()
    assert capped.state == Deployment.State.KILLED
    assert capped.reason.startswith("budget cap: tokens: 1,000 used of 1,000 per day")
    answer = route_answer(REPAIR, SUBJECT)
    assert (answer.model, answer.adapter, answer.reason) == ("qwen-coder", None, "killed")
    trip = AuditEvent.objects.get(verb="deployment.budget_trip")
    assert trip.after["api_client"] == "litellm-proxy" and trip.after["tokens"] == 1000
    kill = AuditEvent.objects.filter(verb="deployment.kill").get()
    assert kill.actor is None and kill.after["budget"] is True
    # the day's cap trips once; later reports still add up
    third = report(client_row, capped, tokens=5)
    assert not third.tripped and third.exceeded
    usage = DeploymentUsage.objects.get(deployment=capped)
    assert (usage.tokens, usage.reports, usage.exceeded) == (1005, 3, True)
    assert AuditEvent.objects.filter(verb="deployment.budget_trip").count() == 1


def test_money_counts_in_exact_decimals(capped, client_row):
    for _ in range(24):
        assert not report(client_row, capped, money="0.10").tripped
    assert report(client_row, capped, money="0.10").tripped  # 2.50 reached, not 2.4999999
    capped.refresh_from_db()
    assert "money: 2.50 spent of 2.50 per day" in capped.reason


def test_a_late_report_adds_to_its_own_utc_day(capped, client_row):
    yesterday = timezone.now().astimezone(UTC) - timedelta(days=1)
    report(client_row, capped, tokens=900, at=yesterday)
    assert not report(client_row, capped, tokens=900).tripped
    days = dict(DeploymentUsage.objects.values_list("day", "tokens"))
    assert days == {yesterday.date(): 900, timezone.now().date(): 900}


def test_a_deployment_over_its_cap_today_serves_the_base_model_even_when_approved_again(
    people, capped, client_row
):
    report(client_row, capped, tokens=1000)
    deploy.deployment_approve(user=people.carol, deployment_id=capped.pk)
    deploy.deployment_activate(user=people.bob, deployment_id=capped.pk)
    answer = route_answer(REPAIR, SUBJECT)
    assert (answer.adapter, answer.reason) == (None, "budget_exceeded")


def test_without_a_cap_usage_is_recorded_and_never_kills(people, client_row):
    d = live(gated_world(people.bob).adapter, people.bob, people.carol)
    check = report(client_row, d, tokens=10**9, money="1000000")
    assert not check.tripped and not check.exceeded
    d.refresh_from_db()
    assert d.state == Deployment.State.ACTIVE


def test_a_report_that_makes_no_sense_is_refused(capped, client_row):
    with pytest.raises(Invalid, match="tokens must be a non-negative integer"):
        report(client_row, capped, tokens=-5)
    with pytest.raises(Invalid, match="must carry a timezone"):
        report(client_row, capped, tokens=1, at=datetime(2026, 11, 29, 12, 0))
    with pytest.raises(NotFound):
        usage_report(
            client=client_row, deployment_id=999, tokens=1, money=Decimal(0), at=timezone.now()
        )
    assert not DeploymentUsage.objects.exists()
