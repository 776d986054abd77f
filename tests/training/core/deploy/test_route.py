import json
import math
import sqlite3

import pytest

from tests.training.factories.deploy_states import (
    AT,
    REPAIR,
    TAMPER,
    active,
    approved,
    drilled,
    proposed,
    version,
)
from training.core.deploy.bucketing import subject_inside
from training.core.deploy.route import (
    BehaviourRoutes,
    InconsistentSnapshot,
    Reason,
    RouteEntry,
    RouteSnapshot,
    decide,
    route,
    snapshot_of,
)
from training.core.deploy.states import (
    State,
    activate,
    kill,
    restore_after_drill,
    retire,
    rollback,
    start_drill,
)

DEFAULT = "default-base"
REPAIR_BASE = "repair-base"


def entry(state=State.ACTIVE, bp=10_000, deployment="7", **kwargs):
    return RouteEntry(
        deployment=deployment,
        state=state,
        adapter=f"{REPAIR}-lora",
        version="1.0.0",
        served_name=f"{REPAIR}-lora-v1.0.0",
        basis_points=bp,
        **kwargs,
    )


def snap(*entries, base_model=REPAIR_BASE):
    return RouteSnapshot(
        default_base_model=DEFAULT,
        behaviours={REPAIR: BehaviourRoutes(base_model=base_model, entries=entries)},
    )


def ask(snapshot, behaviour=REPAIR, subject="repo:acme/api", **kwargs):
    return route(lambda: snapshot, behaviour, subject, default_base_model=DEFAULT, **kwargs)


def test_a_subject_inside_an_active_rollout_gets_the_adapter():
    answer = ask(snap(entry()))
    assert answer.to_dict() == {
        "model": f"{REPAIR}-lora-v1.0.0",
        "adapter": f"{REPAIR}-lora",
        "version": "1.0.0",
        "deployment": "7",
        "reason": "adapter",
    }
    assert json.loads(json.dumps(answer.to_dict()))["reason"] == "adapter"


def test_an_unknown_behaviour_answers_the_default_base_model():
    answer = ask(snap(entry()), behaviour="read-before-edit")
    assert (answer.model, answer.adapter, answer.reason) == (
        DEFAULT,
        None,
        Reason.UNKNOWN_BEHAVIOUR,
    )


def test_a_known_behaviour_without_deployments_answers_its_own_base_model():
    answer = ask(snap())
    assert (answer.model, answer.deployment, answer.reason) == (
        REPAIR_BASE,
        None,
        Reason.NO_DEPLOYMENT,
    )


def test_a_behaviour_without_its_own_base_model_uses_the_default():
    assert ask(snap(base_model=None)).model == DEFAULT


@pytest.mark.parametrize(
    "state, reason",
    [
        (State.KILLED, Reason.KILLED),
        (State.RETIRED, Reason.RETIRED),
        (State.ROLLED_BACK, Reason.ROLLED_BACK),
        (State.APPROVED, Reason.NOT_ACTIVE),
        (State.PROPOSED, Reason.NOT_ACTIVE),
    ],
)
def test_a_deployment_not_active_answers_the_base_model_and_says_why(state, reason):
    answer = ask(snap(entry(state=state)))
    assert (answer.model, answer.adapter, answer.version) == (REPAIR_BASE, None, None)
    assert (answer.deployment, answer.reason) == ("7", reason)


def test_a_kill_is_named_before_an_older_retirement():
    answer = ask(snap(entry(State.RETIRED, deployment="1"), entry(State.KILLED, deployment="2")))
    assert (answer.deployment, answer.reason) == ("2", Reason.KILLED)


def test_an_exceeded_budget_answers_the_base_model():
    answer = ask(snap(entry(budget_exceeded=True)))
    assert (answer.model, answer.reason) == (REPAIR_BASE, Reason.BUDGET_EXCEEDED)


def test_a_subject_outside_the_rollout_answers_the_base_model():
    subjects = [f"repo:acme/p{i}" for i in range(4000)]
    answers = [ask(snap(entry(bp=2500)), subject=s) for s in subjects]
    adapters = sum(a.adapter is not None for a in answers)
    assert abs(adapters - 1000) <= 5 * math.sqrt(4000 * 0.25 * 0.75)
    outside = [a for a in answers if a.adapter is None]
    assert {(a.model, a.reason) for a in outside} == {(REPAIR_BASE, Reason.OUTSIDE_ROLLOUT)}


def test_a_zero_percent_rollout_answers_everyone_with_the_base_model():
    assert ask(snap(entry(bp=0))).reason == Reason.OUTSIDE_ROLLOUT


def test_a_request_without_a_subject_answers_the_base_model():
    assert ask(snap(entry()), subject="").reason == Reason.NO_SUBJECT


def test_a_database_error_while_loading_answers_the_default_base_model_and_reports_it():
    seen = []

    def load():
        raise sqlite3.OperationalError("database is locked")

    answer = route(load, REPAIR, "repo:acme/api", default_base_model=DEFAULT, on_error=seen.append)
    assert answer.to_dict() == {
        "model": DEFAULT,
        "adapter": None,
        "version": None,
        "deployment": None,
        "reason": "error",
    }
    assert [type(e) for e in seen] == [sqlite3.OperationalError]


def test_an_error_while_deciding_answers_the_behaviours_base_model():
    two_active = snap(entry(deployment="1"), entry(deployment="2"))
    with pytest.raises(InconsistentSnapshot, match="2 active deployments: 1, 2"):
        decide(two_active, REPAIR, "repo:acme/api")
    answer = ask(two_active)
    assert (answer.model, answer.reason) == (REPAIR_BASE, Reason.ERROR)


def test_a_corrupt_rollout_in_the_snapshot_answers_the_base_model():
    assert ask(snap(entry(bp=20_000))).reason == Reason.ERROR


def test_a_failing_error_logger_does_not_change_the_answer():
    def broken_logger(error):
        raise RuntimeError("log handler down")

    def load():
        raise OSError("disk")

    answer = route(
        load, REPAIR, "repo:acme/api", default_base_model=DEFAULT, on_error=broken_logger
    )
    assert (answer.model, answer.reason) == (DEFAULT, Reason.ERROR)


def test_a_snapshot_that_is_not_a_snapshot_still_answers_the_default():
    answer = route(lambda: None, REPAIR, "s", default_base_model=DEFAULT)  # type: ignore[arg-type,return-value]
    assert (answer.model, answer.reason) == (DEFAULT, Reason.ERROR)


# -- from deployments


def snapshot(*deployments, exceeded=()):
    return snapshot_of(
        deployments,
        default_base_model=DEFAULT,
        base_models={REPAIR: REPAIR_BASE, TAMPER: None},
        budget_exceeded=exceeded,
    )


def test_the_snapshot_of_an_active_deployment_routes_to_its_adapter():
    d = active(proposed(ident="7", bp={REPAIR: 10_000}))
    answer = ask(snapshot(d))
    assert (answer.model, answer.deployment) == (d.adapter.served_name, "7")


def test_the_kill_switch_flips_the_answer_to_the_base_model():
    d = active(proposed(ident="7", bp={REPAIR: 10_000}))
    assert ask(snapshot(d)).adapter is not None
    answer = ask(snapshot(kill(d, reason="incident 42")))
    assert (answer.model, answer.adapter, answer.reason) == (REPAIR_BASE, None, Reason.KILLED)


def test_a_deployment_over_its_budget_answers_the_base_model():
    d = active(proposed(ident="7", bp={REPAIR: 10_000}))
    assert ask(snapshot(d, exceeded={"7"})).reason == Reason.BUDGET_EXCEEDED


def test_an_approved_deployment_is_not_served_before_activation():
    d = drilled(approved(proposed(ident="7", bp={REPAIR: 10_000})))
    assert ask(snapshot(d)).reason == Reason.NOT_ACTIVE


def test_a_rollback_routes_to_the_previous_version():
    v1 = active(proposed(version("1.0"), ident="1", bp={REPAIR: 10_000}))
    activation = activate(
        drilled(proposed(version("2.0"), ident="2", bp={REPAIR: 10_000})), active=[v1]
    )
    v2, old = activation.deployment, activation.superseded[0]
    assert ask(snapshot(v2, old)).version == "2.0"
    result = rollback(v2, previous=old, reason="worse on acme/api")
    answer = ask(snapshot(result.rolled_back, result.reactivated))
    assert (answer.version, answer.deployment, answer.reason) == ("1.0", "1", Reason.ADAPTER)


def test_a_retired_deployment_answers_the_base_model():
    d = retire(active(proposed(ident="7", bp={REPAIR: 10_000})), reason="done")
    assert ask(snapshot(d)).reason == Reason.RETIRED


def test_a_kill_drill_on_an_active_deployment_sees_the_base_model_then_restores_the_adapter():
    d = active(proposed(ident="7", bp={REPAIR: 500}))
    subject = subject_inside(REPAIR, 500)
    assert ask(snapshot(d), subject=subject).adapter is not None
    during = start_drill(d, at=AT)
    answer = ask(snapshot(during), subject=subject)
    assert (answer.model, answer.reason) == (REPAIR_BASE, Reason.KILLED)
    after = restore_after_drill(during, answer=answer, at=AT)
    assert after.state is State.ACTIVE and after.drilled
    assert ask(snapshot(after), subject=subject).adapter == d.adapter.name


def test_behaviours_without_a_deployment_are_known_to_the_snapshot():
    answer = ask(snapshot(), behaviour=TAMPER)
    assert (answer.model, answer.reason) == (DEFAULT, Reason.NO_DEPLOYMENT)


def test_of_two_killed_deployments_the_answer_names_the_newest_which_comes_first():
    answer = decide(
        snap(entry(State.KILLED, deployment="3"), entry(State.KILLED, deployment="1")), REPAIR, "x"
    )
    assert (answer.deployment, answer.reason) == ("3", "killed")
