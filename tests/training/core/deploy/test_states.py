from dataclasses import replace
from datetime import timedelta

import pytest

from tests.training.factories.deploy_states import (
    AT,
    BASE_MODEL,
    PLAN,
    REPAIR,
    TAMPER,
    active,
    adapter,
    approved,
    base_answer,
    drilled,
    proposed,
    runs,
    verdict_for,
    version,
)
from training.core.deploy.gate import Side, evaluate_gate
from training.core.deploy.route import Reason, RouteAnswer
from training.core.deploy.states import (
    Conflict,
    GateNotPassed,
    IllegalTransition,
    InvalidRequest,
    NeedsApproval,
    NeedsDrill,
    NoPreviousVersion,
    NotAllowed,
    Refusal,
    State,
    activate,
    approve,
    kill,
    previous_approved,
    propose,
    restore_after_drill,
    retire,
    rollback,
    set_percentage,
    start_drill,
)


def approve_as(d, approver="carol", *, is_approver=True, verdict=None, **kwargs):
    verdict = verdict or verdict_for(d.adapter, behaviours=d.requested)
    return approve(d, verdict=verdict, approver=approver, is_approver=is_approver, at=AT, **kwargs)


def killed(d=None):
    return kill(d or active(), reason="wrong answers on acme/api")


def retired(d=None):
    return retire(d or active(), reason="no longer needed")


def rolled_back():
    v1 = active(proposed(version("1.0"), ident="1"))
    v2 = activate(drilled(proposed(version("2.0"), ident="2")), active=[v1])
    return rollback(
        v2.deployment, previous=v2.superseded[0], reason="worse on acme/api"
    ).rolled_back


EVERY_STATE = {
    State.PROPOSED: proposed,
    State.APPROVED: approved,
    State.ACTIVE: active,
    State.KILLED: killed,
    State.ROLLED_BACK: rolled_back,
    State.RETIRED: retired,
}


def test_every_state_has_a_builder_here():
    assert {state: build().state for state, build in EVERY_STATE.items()} == {
        state: state for state in State
    }


# -- propose


def test_a_proposal_records_who_proposed_what_at_which_percentages():
    d = propose(adapter(), proposer="bob", percentages={REPAIR: 1000, TAMPER: 500}, ident="7")
    assert (d.state, d.proposer, dict(d.requested), d.ref) == (
        State.PROPOSED,
        "bob",
        {REPAIR: 1000, TAMPER: 500},
        "7",
    )
    assert d.approval is None and d.drill is None and dict(d.percentages) == {}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"proposer": "", "percentages": {REPAIR: 1000}}, "needs its proposer"),
        ({"proposer": "bob", "percentages": {TAMPER: 1000}}, "must include it"),
        ({"proposer": "bob", "percentages": {REPAIR: 0}}, "at least one behaviour above 0%"),
        ({"proposer": "bob", "percentages": {REPAIR: 10_001}}, "within 0..10000"),
        ({"proposer": "bob", "percentages": {}}, "at least one behaviour"),
    ],
)
def test_a_proposal_without_a_proposer_or_with_bad_percentages_is_refused(kwargs, message):
    with pytest.raises(InvalidRequest, match=message):
        propose(adapter(), **kwargs)


def test_the_deployments_percentages_cannot_be_changed_in_place():
    d = proposed()
    with pytest.raises(TypeError):
        d.requested[REPAIR] = 10_000  # type: ignore[index]


# -- approve


def test_an_approver_who_neither_registered_nor_proposed_approves_on_a_passing_gate():
    d = approve_as(proposed())
    assert d.state is State.APPROVED
    assert d.approval is not None
    assert (d.approval.approver, d.approval.at, dict(d.approval.ceiling)) == (
        "carol",
        AT,
        {REPAIR: 1000},
    )
    assert d.approval.gate == "passed on 1 behaviour(s)"
    assert not d.drilled  # the drill comes next


def test_someone_outside_the_approver_role_cannot_approve():
    with pytest.raises(NotAllowed, match="dave is not in the approver role"):
        approve_as(proposed(), "dave", is_approver=False)


def test_the_adapters_registrar_cannot_approve_its_deployment():
    with pytest.raises(NotAllowed, match="alice registered failing-test-repair-lora@1.0.0"):
        approve_as(proposed(), "alice")


def test_the_proposer_cannot_approve_their_own_proposal():
    with pytest.raises(NotAllowed, match="bob proposed this deployment"):
        approve_as(proposed(), "bob")


def test_the_gate_blocks_the_approval_of_a_regressed_adapter():
    d = proposed()
    regressed = evaluate_gate(
        runs(REPAIR, Side.ADAPTER, [True, True, True, False, False])
        + runs(REPAIR, Side.BASE, [True, True, True, True, False]),
        adapter=d.adapter.key,
        gated=REPAIR,
        thresholds=PLAN,
    )
    with pytest.raises(GateNotPassed, match="the held-out gate blocks .* 20 points worse"):
        approve_as(d, verdict=regressed)


def test_a_gate_computed_for_another_adapter_version_is_refused():
    d = proposed()
    other = verdict_for(version("0.9"))
    with pytest.raises(
        InvalidRequest, match="the gate was computed for failing-test-repair-lora@0.9"
    ):
        approve_as(d, verdict=other)


def test_a_behaviour_the_gate_never_measured_cannot_be_approved_for_rollout():
    d = proposed(bp={REPAIR: 1000, TAMPER: 500})
    with pytest.raises(GateNotPassed, match="measured no rollouts of no-test-tampering"):
        approve_as(d, verdict=verdict_for(d.adapter, behaviours=[REPAIR]))
    assert approve_as(d, verdict=verdict_for(d.adapter, behaviours=[REPAIR, TAMPER])).approval


def test_an_approval_may_cover_other_percentages_than_proposed():
    d = approve_as(proposed(), percentages={REPAIR: 500})
    assert d.approval is not None and dict(d.approval.ceiling) == {REPAIR: 500}


@pytest.mark.parametrize("state", [State.ROLLED_BACK, State.RETIRED])
def test_a_finished_deployment_cannot_be_approved(state):
    with pytest.raises(IllegalTransition, match="cannot be approved"):
        approve_as(EVERY_STATE[state]())


def test_approving_during_a_drill_is_refused():
    with pytest.raises(IllegalTransition, match="drill is in progress"):
        approve_as(start_drill(approved(), at=AT))


def test_a_new_approval_raises_an_active_deployments_ceiling_without_stopping_it():
    first = approve_as(proposed(bp={REPAIR: 5000}), percentages={REPAIR: 1000})
    d = active(first)
    again = approve_as(d, "erin", percentages={REPAIR: 5000})
    assert again.state is State.ACTIVE
    assert dict(again.percentages) == {REPAIR: 1000}
    assert again.approval is not None and again.approval.approver == "erin"
    assert dict(set_percentage(again, behaviour=REPAIR, basis_points=5000).percentages) == {
        REPAIR: 5000
    }


def test_a_new_approval_with_a_lower_ceiling_lowers_the_live_percentage_at_once():
    d = approve_as(active(), percentages={REPAIR: 300})
    assert dict(d.percentages) == {REPAIR: 300}


def test_a_killed_deployment_comes_back_only_through_a_new_approval_and_drill():
    d = killed()
    with pytest.raises(IllegalTransition, match="only an approved deployment can be activated"):
        activate(d)
    again = approve_as(d)
    assert (again.state, again.reason) == (State.APPROVED, "")
    with pytest.raises(NeedsDrill):
        activate(again)
    assert activate(drilled(again)).deployment.state is State.ACTIVE


# -- the kill-and-restore drill


@pytest.mark.parametrize("state", [State.APPROVED, State.ACTIVE])
def test_a_drill_kills_the_deployment_and_a_base_answer_restores_it(state):
    d = EVERY_STATE[state]()
    during = start_drill(d, at=AT)
    assert (during.state, during.reason) == (State.KILLED, "kill drill")
    after = restore_after_drill(during, answer=base_answer(), at=AT + timedelta(seconds=1))
    assert after.state is state
    assert after.drill is not None and after.drilled
    assert (after.drill.started_at, after.drill.answered_at) == (AT, AT + timedelta(seconds=1))
    assert (after.drill.model, after.drill.adapter) == (BASE_MODEL, None)
    assert dict(after.percentages) == dict(d.percentages)


def test_a_drill_that_sees_the_adapter_answered_leaves_the_deployment_killed():
    during = start_drill(approved(), at=AT)
    still_served = RouteAnswer(
        model="failing-test-repair-lora-v1.0.0",
        reason=Reason.ADAPTER,
        adapter="failing-test-repair-lora",
        version="1.0.0",
    )
    after = restore_after_drill(during, answer=still_served, at=AT)
    assert after.state is State.KILLED
    assert after.drill is not None and not after.drill.passed
    assert after.reason.startswith("kill drill failed: the endpoint answered")
    with pytest.raises(IllegalTransition, match="no kill drill is in progress"):
        restore_after_drill(after, answer=base_answer(), at=AT)


@pytest.mark.parametrize("state", [State.PROPOSED, State.KILLED, State.ROLLED_BACK, State.RETIRED])
def test_only_approved_or_active_deployments_are_drilled(state):
    with pytest.raises(IllegalTransition, match="only an approved or active deployment is drilled"):
        start_drill(EVERY_STATE[state](), at=AT)


def test_a_restore_without_a_drill_is_refused():
    with pytest.raises(IllegalTransition, match="no kill drill is in progress"):
        restore_after_drill(killed(), answer=base_answer(), at=AT)


def test_a_drill_answer_from_before_the_drill_is_refused():
    with pytest.raises(InvalidRequest):
        restore_after_drill(
            start_drill(approved(), at=AT), answer=base_answer(), at=AT - timedelta(1)
        )


# -- activate


def test_activation_waits_for_a_passing_drill_after_the_approval():
    with pytest.raises(NeedsDrill, match="unhooks are validated, not declared"):
        activate(approved())


def test_activation_serves_the_approved_percentages_by_default():
    activation = activate(drilled(approved(proposed(bp={REPAIR: 1000, TAMPER: 250}))))
    d = activation.deployment
    assert (d.state, dict(d.percentages), activation.superseded) == (
        State.ACTIVE,
        {REPAIR: 1000, TAMPER: 250},
        (),
    )


def test_activation_may_start_below_the_approved_percentage_but_not_above():
    d = drilled()
    assert dict(activate(d, percentages={REPAIR: 100}).deployment.percentages) == {REPAIR: 100}
    with pytest.raises(NeedsApproval, match="goes above the approved 10%"):
        activate(d, percentages={REPAIR: 1001})
    with pytest.raises(NeedsApproval, match="no-test-tampering is not in the approval"):
        activate(d, percentages={TAMPER: 100})


@pytest.mark.parametrize("state", [State.PROPOSED, State.ACTIVE, State.ROLLED_BACK, State.RETIRED])
def test_only_an_approved_deployment_is_activated(state):
    with pytest.raises(IllegalTransition):
        activate(EVERY_STATE[state]())


def test_activating_a_new_version_supersedes_the_one_serving():
    v1 = active(proposed(version("1.0"), ident="1"))
    activation = activate(drilled(proposed(version("2.0"), ident="2")), active=[v1])
    (old,) = activation.superseded
    assert (old.ref, old.state, old.superseded_by, old.reason) == (
        "1",
        State.RETIRED,
        "2",
        "superseded by 2",
    )
    assert activation.deployment.state is State.ACTIVE


def test_another_adapter_serving_the_same_behaviour_must_be_retired_or_killed_first():
    other = active(proposed(adapter(name=f"{REPAIR}-dpo", registrar="frank"), ident="9"))
    with pytest.raises(IllegalTransition, match=r"served by failing-test-repair-dpo@1.0.0 \(9\)"):
        activate(drilled(proposed(ident="10")), active=[other])
    not_serving = killed(other)
    assert activate(drilled(proposed(ident="10")), active=[not_serving]).superseded == ()


# -- set the rollout percentage


def test_the_rollout_moves_freely_up_to_the_approved_percentage():
    d = active()
    lower = set_percentage(d, behaviour=REPAIR, basis_points=100)
    assert dict(lower.percentages) == {REPAIR: 100}
    assert dict(set_percentage(lower, behaviour=REPAIR, basis_points=1000).percentages) == {
        REPAIR: 1000
    }
    assert dict(set_percentage(d, behaviour=REPAIR, basis_points=0).percentages) == {REPAIR: 0}


def test_raising_the_rollout_above_the_approved_percentage_needs_a_new_approval():
    with pytest.raises(NeedsApproval, match="raising failing-test-repair to 10.01%"):
        set_percentage(active(), behaviour=REPAIR, basis_points=1001)


def test_rolling_out_to_a_behaviour_outside_the_approval_needs_a_new_approval():
    with pytest.raises(NeedsApproval, match="not in the approval"):
        set_percentage(active(), behaviour=TAMPER, basis_points=1)


@pytest.mark.parametrize("bp", [-1, 10_001])
def test_a_rollout_outside_0_to_100_percent_is_refused(bp):
    with pytest.raises(InvalidRequest):
        set_percentage(active(), behaviour=REPAIR, basis_points=bp)


@pytest.mark.parametrize("state", [s for s in State if s is not State.ACTIVE])
def test_only_an_active_deployment_has_a_rollout_to_change(state):
    with pytest.raises(IllegalTransition):
        set_percentage(EVERY_STATE[state](), behaviour=REPAIR, basis_points=100)


# -- kill


@pytest.mark.parametrize("state", [State.PROPOSED, State.APPROVED, State.ACTIVE])
def test_the_kill_switch_needs_no_approval_and_works_from_every_state_that_may_serve(state):
    d = kill(EVERY_STATE[state](), reason="wrong answers on acme/api")
    assert (d.state, d.reason) == (State.KILLED, "wrong answers on acme/api")


def test_killing_twice_changes_nothing():
    d = killed()
    assert kill(d, reason="pressed again") is d


def test_a_kill_during_a_drill_is_a_real_kill_the_drills_restore_cannot_undo():
    during = start_drill(active(), at=AT)
    d = kill(during, reason="incident 42")
    assert (d.state, d.reason, d.pending_drill) == (State.KILLED, "incident 42", None)
    with pytest.raises(IllegalTransition, match="no kill drill is in progress"):
        restore_after_drill(d, answer=base_answer(), at=AT)


@pytest.mark.parametrize("state", [State.ROLLED_BACK, State.RETIRED])
def test_a_finished_deployment_has_nothing_to_kill(state):
    with pytest.raises(IllegalTransition, match="there is nothing to kill"):
        kill(EVERY_STATE[state](), reason="just in case")


def test_a_kill_says_why():
    with pytest.raises(InvalidRequest, match="say why"):
        kill(active(), reason="")


# -- rollback


def two_versions(*, kill_v2=False):
    v1 = active(proposed(version("1.0"), ident="1"))
    v1 = set_percentage(v1, behaviour=REPAIR, basis_points=700)
    activation = activate(drilled(proposed(version("2.0"), ident="2")), active=[v1])
    v2 = activation.deployment
    return (killed(v2) if kill_v2 else v2), activation.superseded[0]


@pytest.mark.parametrize("kill_v2", [False, True])
def test_rollback_reactivates_the_version_it_replaced_at_the_percentage_it_served(kill_v2):
    v2, v1 = two_versions(kill_v2=kill_v2)
    assert previous_approved(v2, [v2, v1]) == v1
    result = rollback(v2, previous=v1, reason="worse on acme/api")
    assert (result.rolled_back.state, result.rolled_back.reason) == (
        State.ROLLED_BACK,
        "worse on acme/api",
    )
    back = result.reactivated
    assert (back.ref, back.state, dict(back.percentages), back.superseded_by) == (
        "1",
        State.ACTIVE,
        {REPAIR: 700},
        "",
    )
    assert back.reason == "re-activated by the rollback of 2"


def test_rollback_without_a_previous_version_points_at_the_kill_switch():
    d = active()
    assert previous_approved(d, [d]) is None
    with pytest.raises(NoPreviousVersion, match="the kill switch answers the base model instead"):
        rollback(d, previous=None, reason="worse")


def test_rollback_only_returns_to_the_version_this_one_replaced():
    v2, v1 = two_versions()
    withdrawn = retire(active(proposed(version("0.9"), ident="0")), reason="old")
    with pytest.raises(IllegalTransition, match="0 is not the version 2 replaced"):
        rollback(v2, previous=withdrawn, reason="worse")
    assert previous_approved(v2, [withdrawn]) is None


def test_rollback_never_crosses_to_another_adapter():
    v2, v1 = two_versions()
    other = replace(v1, adapter=adapter(name=f"{REPAIR}-dpo"))
    with pytest.raises(IllegalTransition, match="is another adapter"):
        rollback(v2, previous=other, reason="worse")


def test_a_version_never_drilled_since_its_approval_is_not_a_rollback_target():
    v2, v1 = two_versions()
    undrilled = replace(v1, drill=None)
    with pytest.raises(IllegalTransition, match="was not approved and drilled"):
        rollback(v2, previous=undrilled, reason="worse")


@pytest.mark.parametrize(
    "state", [State.PROPOSED, State.APPROVED, State.ROLLED_BACK, State.RETIRED]
)
def test_only_an_active_or_killed_deployment_is_rolled_back(state):
    v2, v1 = two_versions()
    with pytest.raises(IllegalTransition, match="only an active or killed deployment"):
        rollback(EVERY_STATE[state](), previous=v1, reason="worse")


def test_rolling_back_during_a_drill_is_refused():
    v2, v1 = two_versions()
    with pytest.raises(IllegalTransition, match="in a drill"):
        rollback(start_drill(v2, at=AT), previous=v1, reason="worse")


def test_a_rollback_says_why():
    v2, v1 = two_versions()
    with pytest.raises(InvalidRequest, match="say why"):
        rollback(v2, previous=v1, reason="")


# -- retire


@pytest.mark.parametrize("state", [State.PROPOSED, State.APPROVED, State.ACTIVE, State.KILLED])
def test_any_unfinished_deployment_can_be_retired(state):
    d = retire(EVERY_STATE[state](), reason="replaced by a prompt")
    assert (d.state, d.reason, d.superseded_by) == (State.RETIRED, "replaced by a prompt", "")


@pytest.mark.parametrize("state", [State.ROLLED_BACK, State.RETIRED])
def test_a_finished_deployment_cannot_be_retired_again(state):
    with pytest.raises(IllegalTransition, match="already"):
        retire(EVERY_STATE[state](), reason="tidy up")


def test_refusals_tell_views_which_status_to_answer():
    assert issubclass(NotAllowed, Refusal) and issubclass(InvalidRequest, Refusal)
    for conflict in (
        IllegalTransition,
        GateNotPassed,
        NeedsApproval,
        NeedsDrill,
        NoPreviousVersion,
    ):
        assert issubclass(conflict, Conflict)
    assert not issubclass(NotAllowed, Conflict) and not issubclass(InvalidRequest, Conflict)


# -- words


def _refusal_of(call):
    with pytest.raises(IllegalTransition) as refused:
        call()
    return str(refused.value)


@pytest.mark.parametrize(
    ("state", "attempt", "words"),
    [
        (State.ACTIVE, lambda d: activate(d), "not an active one"),
        (
            State.APPROVED,
            lambda d: set_percentage(d, behaviour=REPAIR, basis_points=1),
            "not an approved one",
        ),
        (
            State.APPROVED,
            lambda d: rollback(d, previous=None, reason="worse"),
            "not an approved one",
        ),
        (State.PROPOSED, lambda d: activate(d), "not a proposed one"),
        (State.RETIRED, lambda d: start_drill(d, at=AT), "not a retired one"),
    ],
)
def test_a_refused_transition_names_the_state_with_its_article(state, attempt, words):
    message = _refusal_of(lambda: attempt(EVERY_STATE[state]()))
    assert words in message
    assert "a active" not in message and "a approved" not in message


def test_an_approval_covers_at_most_what_was_proposed():
    d = proposed(bp={REPAIR: 1000})
    with pytest.raises(NotAllowed, match="at most what was proposed, not failing-test-repair at"):
        approve_as(d, percentages={REPAIR: 5000})
    with pytest.raises(NotAllowed, match="at most what was proposed"):
        approve_as(d, percentages={REPAIR: 1000, "read-before-edit": 100})
    assert dict(approve_as(d, percentages={REPAIR: 500}).approval.ceiling) == {REPAIR: 500}
