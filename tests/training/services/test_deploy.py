"""Deployments through the database: every transition writes its audit event in the same
transaction, and every refusal leaves the row as it was."""

from __future__ import annotations

import pytest

from groundwork.access.errors import Conflict, Invalid, NotPermitted
from groundwork.models import AuditEvent
from tests.training.factories.deploy import (
    REPAIR,
    approver_who_reviews,
    gated_world,
    live,
    next_version,
    proposed,
)
from training.core.deploy.bucketing import subject_inside
from training.core.deploy.route import RouteAnswer
from training.models import Deployment, DeploymentShare
from training.selectors.deploy import route_answer
from training.services import deploy

pytestmark = pytest.mark.django_db


def verbs(d: Deployment) -> list[str]:
    return list(
        AuditEvent.objects.filter(target_type="deployment", target_id=str(d.pk))
        .order_by("id")
        .values_list("verb", flat=True)
    )


def inside(percent: int = 10) -> str:
    return subject_inside(REPAIR, percent * 100)


@pytest.fixture
def world(people):
    return gated_world(people.bob)


# -- propose ---------------------------------------------------------------------------------------


def test_a_proposal_records_its_rollout_thresholds_and_budget(people, world):
    d = proposed(world.adapter, people.bob, 25, tokens_per_day=1000)
    assert d.state == Deployment.State.PROPOSED and d.proposed_by == people.bob
    share = DeploymentShare.objects.get(deployment=d)
    assert (share.behaviour.slug, share.requested, share.ceiling, share.live) == (
        REPAIR,
        2500,
        None,
        None,
    )
    event = AuditEvent.objects.get(verb="deployment.propose")
    assert event.actor == people.bob and event.after["requested"] == {REPAIR: "25%"}
    assert event.after["budget"]["tokens_per_day"] == 1000


def test_a_proposal_without_its_own_behaviour_or_with_an_unknown_one_is_refused(people, world):
    with pytest.raises(Invalid, match="the proposal must include it"):
        deploy.deployment_propose(
            user=people.bob, adapter_id=world.adapter.pk, percentages={"read-before-edit": 100}
        )
    with pytest.raises(Invalid, match="no behaviour nowhere"):
        deploy.deployment_propose(
            user=people.bob,
            adapter_id=world.adapter.pk,
            percentages={REPAIR: 100, "nowhere": 100},
        )
    with pytest.raises(Invalid, match="money_per_day must be positive"):
        proposed(world.adapter, people.bob, money_per_day=0)
    assert not Deployment.objects.exists()


def test_an_annotator_cannot_propose(people, world):
    with pytest.raises(NotPermitted):
        proposed(world.adapter, people.alice)


# -- approve and drill -------------------------------------------------------------------------


def test_an_approver_approves_on_the_gate_and_the_kill_drill_runs_at_once(people, world):
    d = proposed(world.adapter, people.bob)
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    d.refresh_from_db()
    assert d.state == Deployment.State.APPROVED
    assert d.drill_answered_at is not None and d.drill_answered_at >= d.drill_started_at
    assert d.drill_model == "qwen-coder" and d.drill_adapter == ""
    assert d.pending_drill_at is None
    assert DeploymentShare.objects.get(deployment=d).ceiling == 1000
    assert verbs(d) == [
        "deployment.propose",
        "deployment.approve",
        "deployment.drill_start",
        "deployment.drill",
    ]
    drill = AuditEvent.objects.get(verb="deployment.drill")
    assert drill.after["passed"] is True and drill.after["state"] == "approved"
    assert drill.after["answers"][REPAIR]["adapter"] is None


def test_the_registrar_cannot_approve_their_own_adapter_even_as_an_approver(people):
    frank = approver_who_reviews()
    world = gated_world(frank)
    d = proposed(world.adapter, people.bob)
    with pytest.raises(NotPermitted, match="frank registered failing-test-repair-lora@1.0"):
        deploy.deployment_approve(user=frank, deployment_id=d.pk)
    d.refresh_from_db()
    assert d.state == Deployment.State.PROPOSED and not d.approvals.exists()


def test_the_proposer_cannot_approve_their_own_proposal(people, world):
    frank = approver_who_reviews()
    d = proposed(world.adapter, frank)
    with pytest.raises(NotPermitted, match="frank proposed this deployment"):
        deploy.deployment_approve(user=frank, deployment_id=d.pk)


def test_only_the_approver_role_approves(people, world):
    d = proposed(world.adapter, people.bob)
    for who in (people.dave, people.alice, people.eve):
        with pytest.raises(NotPermitted):
            deploy.deployment_approve(user=who, deployment_id=d.pk)


def test_a_drill_that_sees_the_adapter_while_killed_fails_and_leaves_it_killed(
    people, world, monkeypatch
):
    d = proposed(world.adapter, people.bob)
    leaky = RouteAnswer(
        model=world.adapter.served_name,
        reason="adapter",
        adapter=world.adapter.name,
        version="1.0",
        deployment=str(d.pk),
    )
    monkeypatch.setattr(deploy, "route_answer", lambda behaviour, subject, deployment: leaky)
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    d.refresh_from_db()
    assert d.state == Deployment.State.KILLED
    assert d.reason.startswith("kill drill failed: the endpoint answered")
    assert d.drill_adapter == world.adapter.name
    with pytest.raises(Conflict, match="only an approved deployment can be activated"):
        deploy.deployment_activate(user=people.bob, deployment_id=d.pk)


def test_a_kill_during_a_drill_is_a_real_kill_the_restore_does_not_undo(people, world, monkeypatch):
    d = live(world.adapter, people.bob, people.carol)
    real = deploy.route_answer

    def pulled_meanwhile(behaviour: str, subject: str, deployment: int):
        deploy.deployment_kill(user=people.carol, deployment_id=d.pk, reason="wrong answers")
        return real(behaviour, subject, deployment=deployment)

    monkeypatch.setattr(deploy, "route_answer", pulled_meanwhile)
    with pytest.raises(Conflict, match="killed during its drill; it stays killed"):
        deploy.deployment_drill(user=people.bob, deployment_id=d.pk)
    d.refresh_from_db()
    assert d.state == Deployment.State.KILLED and d.reason == "wrong answers"
    assert d.pending_drill_at is None


# -- activate, rollouts ------------------------------------------------------------------------


def test_activation_serves_the_approved_rollout_and_drills_again_while_live(people, world):
    d = live(world.adapter, people.bob, people.carol)
    d.refresh_from_db()
    assert d.state == Deployment.State.ACTIVE
    assert DeploymentShare.objects.get(deployment=d).live == 1000
    assert verbs(d)[-3:] == ["deployment.activate", "deployment.drill_start", "deployment.drill"]
    answer = route_answer(REPAIR, inside())
    assert (answer.model, answer.adapter, answer.deployment) == (
        world.adapter.served_name,
        world.adapter.name,
        str(d.pk),
    )


def test_activation_waits_for_an_approval(people, world):
    d = proposed(world.adapter, people.bob)
    with pytest.raises(Conflict, match="only an approved deployment can be activated"):
        deploy.deployment_activate(user=people.bob, deployment_id=d.pk)


def test_raising_a_rollout_above_the_approval_needs_a_new_approval(people, world):
    d = proposed(world.adapter, people.bob, percent=50)
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk, percentages={REPAIR: 1000})
    deploy.deployment_activate(user=people.bob, deployment_id=d.pk)
    deploy.deployment_percentage_set(
        user=people.bob, deployment_id=d.pk, behaviour=REPAIR, basis_points=500
    )
    assert DeploymentShare.objects.get(deployment=d).live == 500
    with pytest.raises(Conflict, match="goes above the approved 10%: that needs a new approval"):
        deploy.deployment_percentage_set(
            user=people.bob, deployment_id=d.pk, behaviour=REPAIR, basis_points=2000
        )
    assert DeploymentShare.objects.get(deployment=d).live == 500
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk, percentages={REPAIR: 5000})
    deploy.deployment_percentage_set(
        user=people.bob, deployment_id=d.pk, behaviour=REPAIR, basis_points=2000
    )
    d.refresh_from_db()
    assert d.state == Deployment.State.ACTIVE
    assert DeploymentShare.objects.get(deployment=d).live == 2000
    assert verbs(d).count("deployment.percentage") == 2


def test_a_new_version_supersedes_the_active_one(people, world):
    first = live(world.adapter, people.bob, people.carol)
    second = live(next_version(world, people.bob, "1.1"), people.bob, people.carol)
    first.refresh_from_db()
    assert first.state == Deployment.State.RETIRED and first.superseded_by == second
    assert "deployment.supersede" in verbs(first)
    assert route_answer(REPAIR, inside()).version == "1.1"


def test_drilling_a_new_version_while_the_old_one_serves_asks_about_the_new_one(people, world):
    live(world.adapter, people.bob, people.carol)
    second = proposed(next_version(world, people.bob, "1.1"), people.bob)
    deploy.deployment_approve(user=people.carol, deployment_id=second.pk)
    second.refresh_from_db()
    assert second.state == Deployment.State.APPROVED and second.drill_adapter == ""
    # the endpoint itself still answers 1.0 to the drill's subject: the version that serves
    assert route_answer(REPAIR, inside()).version == "1.0"


# -- kill, rollback, retire --------------------------------------------------------------------


def test_the_kill_switch_answers_the_base_model_at_once_and_needs_no_approval(people, world):
    d = live(world.adapter, people.bob, people.carol)
    deploy.deployment_kill(user=people.bob, deployment_id=d.pk, reason="wrong answers on acme/api")
    d.refresh_from_db()
    assert d.state == Deployment.State.KILLED and d.reason == "wrong answers on acme/api"
    answer = route_answer(REPAIR, inside())
    assert (answer.model, answer.adapter, answer.reason) == ("qwen-coder", None, "killed")
    event = AuditEvent.objects.filter(verb="deployment.kill").get()
    assert event.before["state"] == "active" and event.after["state"] == "killed"
    # pulling it again is harmless; a retired deployment has nothing to kill
    deploy.deployment_kill(user=people.carol, deployment_id=d.pk, reason="again")
    deploy.deployment_retire(user=people.bob, deployment_id=d.pk, reason="done")
    with pytest.raises(Conflict, match="serves nothing"):
        deploy.deployment_kill(user=people.bob, deployment_id=d.pk, reason="too late")


def test_a_200_kb_reason_to_retire_is_refused_but_a_kill_goes_through_whatever_it_says(
    people, world
):
    d = live(world.adapter, people.bob, people.carol)
    with pytest.raises(Invalid, match="reason is 204,800 characters long; at most 10,000"):
        deploy.deployment_retire(user=people.bob, deployment_id=d.pk, reason="r" * 204_800)
    d.refresh_from_db()
    assert d.state == Deployment.State.ACTIVE
    deploy.deployment_kill(user=people.bob, deployment_id=d.pk, reason="k" * 204_800)
    d.refresh_from_db()
    assert d.state == Deployment.State.KILLED


def test_a_nul_character_in_a_reason_refuses_a_retire_but_a_kill_drops_it_and_goes_through(
    people, world
):
    # PostgreSQL stores no NUL in a text column: the kill failed there with a 500.
    d = live(world.adapter, people.bob, people.carol)
    with pytest.raises(Invalid, match="reason holds a NUL character"):
        deploy.deployment_retire(user=people.bob, deployment_id=d.pk, reason="done\x00")
    deploy.deployment_kill(user=people.bob, deployment_id=d.pk, reason="wrong\x00 answers")
    d.refresh_from_db()
    assert (d.state, d.reason) == (Deployment.State.KILLED, "wrong answers")


def test_a_killed_deployment_comes_back_only_through_a_new_approval(people, world):
    d = live(world.adapter, people.bob, people.carol)
    deploy.deployment_kill(user=people.bob, deployment_id=d.pk, reason="incident")
    with pytest.raises(Conflict):
        deploy.deployment_activate(user=people.bob, deployment_id=d.pk)
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    deploy.deployment_activate(user=people.bob, deployment_id=d.pk)
    d.refresh_from_db()
    assert d.state == Deployment.State.ACTIVE


def test_rollback_reactivates_the_previous_approved_version(people, world):
    first = live(world.adapter, people.bob, people.carol)
    second = live(next_version(world, people.bob, "1.1"), people.bob, people.carol)
    back = deploy.deployment_rollback(user=people.bob, deployment_id=second.pk, reason="worse")
    second.refresh_from_db()
    first.refresh_from_db()
    assert back == first
    assert second.state == Deployment.State.ROLLED_BACK and second.reason == "worse"
    assert first.state == Deployment.State.ACTIVE and first.superseded_by is None
    assert DeploymentShare.objects.get(deployment=first).live == 1000
    assert route_answer(REPAIR, inside()).version == "1.0"
    assert "deployment.rollback" in verbs(second)
    assert verbs(first)[-3:] == [
        "deployment.reactivate",
        "deployment.drill_start",
        "deployment.drill",
    ]


def test_rollback_without_an_earlier_version_is_refused_in_words(people, world):
    d = live(world.adapter, people.bob, people.carol)
    with pytest.raises(Conflict, match="no earlier approved version of failing-test-repair-lora"):
        deploy.deployment_rollback(user=people.bob, deployment_id=d.pk, reason="worse")
    d.refresh_from_db()
    assert d.state == Deployment.State.ACTIVE


def test_kill_and_rollback_need_the_operate_permission(people, world):
    d = live(world.adapter, people.bob, people.carol)
    with pytest.raises(NotPermitted):
        deploy.deployment_kill(user=people.alice, deployment_id=d.pk, reason="x")
    with pytest.raises(NotPermitted):
        deploy.deployment_rollback(user=people.eve, deployment_id=d.pk, reason="x")
    deploy.deployment_kill(user=people.dave, deployment_id=d.pk, reason="admin pulled it")


def test_a_missing_deployment_is_not_found(people):
    from groundwork.access.errors import NotFound

    with pytest.raises(NotFound):
        deploy.deployment_kill(user=people.bob, deployment_id=999, reason="x")
