"""Deployment states and one pure function per action; each returns the new deployment or raises
a typed refusal whose message the page shows as it is.

>>> from datetime import UTC, datetime
>>> from training.core.deploy.adapters import AdapterVersion
>>> from training.core.deploy.gate import GateThresholds, RolloutOutcome, Side, evaluate_gate
>>> from training.core.deploy.route import RouteAnswer
>>> at = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
>>> adapter = AdapterVersion(
...     name="failing-test-repair-lora", version="1.0", behaviour="failing-test-repair",
...     eval_suite="repair-held-out", base_model="qwen-coder", training_plan="plan-7",
...     dataset_sha256="a" * 64, artifact_uri="file:///srv/adapters/repair-1.0",
...     artifact_sha256="b" * 64, rank=16, registrar="alice")
>>> verdict = evaluate_gate(
...     [RolloutOutcome(f"t{i}", "failing-test-repair", side, True, 1.0)
...      for i in range(3) for side in Side],
...     adapter=adapter.key, gated=adapter.behaviour,
...     thresholds=GateThresholds(min_rollouts=3, min_pass_rate=0.5, tolerance=0.0))
>>> d = propose(adapter, proposer="bob", percentages={"failing-test-repair": 1000})
>>> approve(d, verdict=verdict, approver="alice", is_approver=True, at=at)
Traceback (most recent call last):
...
training.core.deploy.states.NotAllowed: alice registered failing-test-repair-lora@1.0 and \
cannot approve its deployment
>>> d = approve(d, verdict=verdict, approver="carol", is_approver=True, at=at)
>>> d = start_drill(d, at=at)
>>> d = restore_after_drill(d, answer=RouteAnswer(model="qwen-coder", reason="killed"), at=at)
>>> d = activate(d).deployment
>>> d.state, dict(d.percentages)
(<State.ACTIVE: 'active'>, {'failing-test-repair': 1000})
>>> set_percentage(d, behaviour="failing-test-repair", basis_points=2000)
Traceback (most recent call last):
...
training.core.deploy.states.NeedsApproval: raising failing-test-repair to 20% goes above the \
approved 10%: that needs a new approval
>>> kill(d, reason="wrong answers on repo acme/api").state
<State.KILLED: 'killed'>

The states: proposed -> approved -> active, with killed, rolled back and retired beside them.

- Approval needs a passing gate for this adapter version and an approver (the role check is the
  service's; it passes ``is_approver``) who neither registered the adapter nor proposed the
  deployment. Every approval sets the percentages it covers (the ceiling) and clears the last
  drill: unhooks are validated, not declared, so activation waits for a kill-and-restore drill
  that saw the endpoint answer the base model.
- An active deployment's percentage moves freely below its ceiling; above it needs a new
  approval (``approve`` on the active deployment raises the ceiling without stopping it).
- Kill needs no approval, works from every state that may serve, and repeating it is harmless;
  a kill during a drill turns the drill into a real kill, so the drill's restore cannot undo it.
  A killed deployment comes back only through a new approval.
- Rollback retires the current version as rolled back and re-activates the version it replaced
  (``superseded_by`` links them), which was approved and drilled when it served.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Protocol

from training.core.deploy.adapters import AdapterVersion
from training.core.deploy.bucketing import check_basis_points, format_percentage
from training.core.deploy.gate import GateVerdict
from trajectories.core.words import with_article


class State(StrEnum):
    PROPOSED = "proposed"
    APPROVED = "approved"
    ACTIVE = "active"
    KILLED = "killed"
    ROLLED_BACK = "rolled_back"
    RETIRED = "retired"


# The states a kill applies to: everything that serves or could be made to serve without
# another approval.
KILLABLE = frozenset({State.PROPOSED, State.APPROVED, State.ACTIVE})


class Refusal(Exception):
    """An action the deployment rules refuse. Views answer 403 for ``NotAllowed``, 409 for a
    ``Conflict`` with the deployment's state, 422 for an ``InvalidRequest``."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class NotAllowed(Refusal):
    """This person may not do this (not an approver, or approving their own work)."""


class InvalidRequest(Refusal):
    """The request itself does not make sense (percentages, a gate of another adapter)."""


class Conflict(Refusal):
    """The deployment's state does not allow this now."""


class IllegalTransition(Conflict):
    pass


class GateNotPassed(Conflict):
    pass


class NeedsApproval(Conflict):
    pass


class NeedsDrill(Conflict):
    pass


class NoPreviousVersion(Conflict):
    pass


class Answer(Protocol):
    """What a kill drill observed the route endpoint answer (``route.RouteAnswer`` fits)."""

    @property
    def model(self) -> str: ...

    @property
    def adapter(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Approval:
    approver: str
    at: datetime
    ceiling: Mapping[str, int]  # basis points per behaviour this approval covers
    gate: str  # the verdict's summary as the approver saw it

    def __post_init__(self) -> None:
        object.__setattr__(self, "ceiling", MappingProxyType(dict(sorted(self.ceiling.items()))))


@dataclass(frozen=True, slots=True)
class PendingDrill:
    started_at: datetime
    resume: State  # where a passing drill returns the deployment


@dataclass(frozen=True, slots=True)
class Drill:
    started_at: datetime
    answered_at: datetime
    model: str  # what the endpoint answered while the deployment was killed
    adapter: str | None

    @property
    def passed(self) -> bool:
        return self.adapter is None


@dataclass(frozen=True, slots=True)
class Deployment:
    """One deployment as the rules see it. The service builds it from its row, calls one
    transition, and saves the fields that changed with the audit event, in one transaction."""

    adapter: AdapterVersion
    proposer: str
    requested: Mapping[str, int]  # basis points per behaviour, as proposed
    state: State = State.PROPOSED
    approval: Approval | None = None  # the latest
    drill: Drill | None = None  # the latest since the latest approval
    pending_drill: PendingDrill | None = None
    percentages: Mapping[str, int] = field(default_factory=dict)  # live when active
    superseded_by: str = ""  # the deployment that replaced this one; rollback returns here
    reason: str = ""  # why it is in its state, when a person or a rule said so
    ident: str = ""  # the service's id for it (the database key), shown in route answers

    def __post_init__(self) -> None:
        for name in ("requested", "percentages"):
            object.__setattr__(
                self, name, MappingProxyType(dict(sorted(getattr(self, name).items())))
            )

    @property
    def ref(self) -> str:
        return self.ident or self.adapter.key

    @property
    def drilled(self) -> bool:
        """A kill-and-restore drill passed since the latest approval."""
        return self.drill is not None and self.drill.passed


@dataclass(frozen=True, slots=True)
class Activation:
    deployment: Deployment
    superseded: tuple[Deployment, ...]  # earlier versions of the same adapter, now retired


@dataclass(frozen=True, slots=True)
class Rollback:
    rolled_back: Deployment
    reactivated: Deployment


def propose(
    adapter: AdapterVersion, *, proposer: str, percentages: Mapping[str, int], ident: str = ""
) -> Deployment:
    if not proposer:
        raise InvalidRequest("a proposal needs its proposer")
    requested = _percentages(percentages)
    if adapter.behaviour not in requested:
        raise InvalidRequest(
            f"{adapter.key} was trained for {adapter.behaviour}; the proposal must include it"
        )
    if not any(requested.values()):
        raise InvalidRequest("a proposal needs at least one behaviour above 0%")
    return Deployment(adapter=adapter, proposer=proposer, requested=requested, ident=ident)


def approve(
    d: Deployment,
    *,
    verdict: GateVerdict,
    approver: str,
    is_approver: bool,
    at: datetime,
    percentages: Mapping[str, int] | None = None,
) -> Deployment:
    """Approve ``d`` up to ``percentages`` (by default those proposed, never more) on a passing
    gate."""
    if d.pending_drill is not None:
        raise IllegalTransition("a kill drill is in progress; approve once it has finished")
    if d.state not in (State.PROPOSED, State.APPROVED, State.ACTIVE, State.KILLED):
        raise IllegalTransition(f"{_a(d.state)} deployment cannot be approved")
    if not approver:
        raise InvalidRequest("an approval needs its approver")
    if not is_approver:
        raise NotAllowed(f"{approver} is not in the approver role")
    if approver == d.adapter.registrar:
        raise NotAllowed(f"{approver} registered {d.adapter.key} and cannot approve its deployment")
    if approver == d.proposer:
        raise NotAllowed(f"{approver} proposed this deployment and cannot approve it too")
    if verdict.adapter != d.adapter.key or verdict.gated != d.adapter.behaviour:
        raise InvalidRequest(
            f"the gate was computed for {verdict.adapter} on {verdict.gated}, not for "
            f"{d.adapter.key} on {d.adapter.behaviour}"
        )
    if not verdict.passed:
        raise GateNotPassed(f"the held-out gate blocks {d.adapter.key}: {verdict.summary()}")
    ceiling = _percentages(d.requested if percentages is None else percentages)
    beyond = [
        f"{b} at {format_percentage(bp)} (proposed {format_percentage(d.requested.get(b, 0))})"
        for b, bp in sorted(ceiling.items())
        if bp > d.requested.get(b, 0)
    ]
    if beyond:
        raise NotAllowed(
            f"an approval covers at most what was proposed, not {', '.join(beyond)}; "
            "propose again for more"
        )
    unmeasured = sorted(b for b, bp in ceiling.items() if bp and b not in verdict.behaviours)
    if unmeasured:
        raise GateNotPassed(
            f"the held-out gate measured no rollouts of {', '.join(unmeasured)}; "
            "it cannot be rolled out there"
        )
    # A new approval may lower the ceiling; live percentages follow it down at once.
    live = {b: min(bp, ceiling.get(b, 0)) for b, bp in d.percentages.items()}
    return replace(
        d,
        state=d.state if d.state in (State.APPROVED, State.ACTIVE) else State.APPROVED,
        approval=Approval(approver=approver, at=at, ceiling=ceiling, gate=verdict.summary()),
        drill=None,
        percentages=live,
        reason="",
    )


def start_drill(d: Deployment, *, at: datetime) -> Deployment:
    """Kill ``d`` for a drill; the service then asks the endpoint and calls
    ``restore_after_drill`` with the answer."""
    if d.state not in (State.APPROVED, State.ACTIVE) or d.approval is None:
        raise IllegalTransition(
            f"only an approved or active deployment is drilled, not {_a(d.state)} one"
        )
    return replace(
        d,
        state=State.KILLED,
        pending_drill=PendingDrill(started_at=at, resume=d.state),
        reason="kill drill",
    )


def restore_after_drill(d: Deployment, *, answer: Answer, at: datetime) -> Deployment:
    """Finish a drill with what the endpoint answered while ``d`` was killed. A drill that saw
    the base model restores the state it started from; one that saw the adapter leaves the
    deployment killed, with the failure as its reason."""
    pending = d.pending_drill
    if d.state is not State.KILLED or pending is None:
        raise IllegalTransition("no kill drill is in progress")
    if at < pending.started_at:
        raise InvalidRequest("the drill's answer cannot come before the drill started")
    drill = Drill(
        started_at=pending.started_at, answered_at=at, model=answer.model, adapter=answer.adapter
    )
    if drill.passed:
        return replace(d, state=pending.resume, pending_drill=None, drill=drill, reason="")
    return replace(
        d,
        pending_drill=None,
        drill=drill,
        reason=f"kill drill failed: the endpoint answered {answer.model} "
        f"(adapter {answer.adapter}) while the deployment was killed",
    )


def activate(
    d: Deployment,
    *,
    active: Iterable[Deployment] = (),
    percentages: Mapping[str, int] | None = None,
) -> Activation:
    """Serve ``d`` at ``percentages`` (by default its approved ceiling). ``active`` are the
    deployments serving now: those of the same adapter are superseded (retired, and the target
    of a later rollback); another adapter on one of the same behaviours is refused, since the
    route answers one deployment per behaviour."""
    if d.state is not State.APPROVED or d.approval is None:
        raise IllegalTransition(
            f"only an approved deployment can be activated, not {_a(d.state)} one"
        )
    if not d.drilled:
        raise NeedsDrill(
            "unhooks are validated, not declared: run the kill-and-restore drill after the "
            "approval before activating"
        )
    target = _percentages(d.approval.ceiling if percentages is None else percentages)
    _within_ceiling(d.approval, target)
    superseded = []
    for other in active:
        if other.state is not State.ACTIVE or other.ref == d.ref:
            continue
        shared = sorted(set(other.percentages) & set(target))
        if not shared:
            continue
        if other.adapter.name != d.adapter.name:
            raise IllegalTransition(
                f"{', '.join(shared)} is served by {other.adapter.key} ({other.ref}); "
                "retire or kill it first"
            )
        superseded.append(
            replace(
                other, state=State.RETIRED, superseded_by=d.ref, reason=f"superseded by {d.ref}"
            )
        )
    activated = replace(d, state=State.ACTIVE, percentages=target, superseded_by="", reason="")
    return Activation(deployment=activated, superseded=tuple(superseded))


def set_percentage(d: Deployment, *, behaviour: str, basis_points: int) -> Deployment:
    if d.state is not State.ACTIVE or d.approval is None:
        raise IllegalTransition(
            f"only an active deployment has a rollout to change, not {_a(d.state)} one"
        )
    try:
        check_basis_points(basis_points)
    except ValueError as error:
        raise InvalidRequest(str(error)) from None
    _within_ceiling(d.approval, {behaviour: basis_points})
    return replace(d, percentages={**d.percentages, behaviour: basis_points})


def kill(d: Deployment, *, reason: str) -> Deployment:
    """The kill switch: the route answers the base model for ``d`` from now on."""
    if not reason:
        raise InvalidRequest("say why it is killed; the audit log and the page show it")
    if d.state is State.KILLED:
        if d.pending_drill is None:
            return d
        return replace(d, pending_drill=None, reason=reason)
    if d.state not in KILLABLE:
        raise IllegalTransition(
            f"{_a(d.state)} deployment serves nothing; there is nothing to kill"
        )
    return replace(d, state=State.KILLED, reason=reason)


def retire(d: Deployment, *, reason: str) -> Deployment:
    if d.state in (State.RETIRED, State.ROLLED_BACK):
        raise IllegalTransition(f"the deployment is already {_words(d.state)}")
    return replace(d, state=State.RETIRED, pending_drill=None, superseded_by="", reason=reason)


def previous_approved(current: Deployment, history: Iterable[Deployment]) -> Deployment | None:
    """The deployment ``current`` superseded, if it may serve again (see ``rollback``)."""
    for candidate in history:
        if _rollback_target_problem(current, candidate) is None:
            return candidate
    return None


def rollback(current: Deployment, *, previous: Deployment | None, reason: str) -> Rollback:
    """Take ``current`` out as rolled back and re-activate ``previous``, the version it
    replaced, at the percentages it last served (within its approval)."""
    if current.state not in (State.ACTIVE, State.KILLED) or current.pending_drill is not None:
        raise IllegalTransition(
            f"only an active or killed deployment is rolled back, not {_a(current.state)} one"
            + (" in a drill" if current.pending_drill else "")
        )
    if not reason:
        raise InvalidRequest("say why it is rolled back; the audit log and the page show it")
    if previous is None:
        raise NoPreviousVersion(
            f"no earlier approved version of {current.adapter.name} to roll back to; the kill "
            "switch answers the base model instead"
        )
    problem = _rollback_target_problem(current, previous)
    if problem is not None:
        raise IllegalTransition(problem)
    assert previous.approval is not None  # checked by _rollback_target_problem
    ceiling = previous.approval.ceiling
    served = previous.percentages or ceiling
    target = {b: min(bp, ceiling.get(b, 0)) for b, bp in served.items()}
    return Rollback(
        rolled_back=replace(current, state=State.ROLLED_BACK, reason=reason),
        reactivated=replace(
            previous,
            state=State.ACTIVE,
            percentages=target,
            superseded_by="",
            reason=f"re-activated by the rollback of {current.ref}",
        ),
    )


def _rollback_target_problem(current: Deployment, previous: Deployment) -> str | None:
    if previous.adapter.name != current.adapter.name:
        return f"{previous.adapter.key} is another adapter, not a version of {current.adapter.name}"
    if previous.state is not State.RETIRED or previous.superseded_by != current.ref:
        return f"{previous.ref} is not the version {current.ref} replaced"
    if previous.approval is None or not previous.drilled:
        return f"{previous.ref} was not approved and drilled when it served"
    return None


def _percentages(values: Mapping[str, int]) -> dict[str, int]:
    if not values:
        raise InvalidRequest("name at least one behaviour and its rollout percentage")
    for behaviour, bp in values.items():
        if not behaviour:
            raise InvalidRequest("a rollout percentage needs its behaviour")
        try:
            check_basis_points(bp)
        except ValueError as error:
            raise InvalidRequest(f"{behaviour}: {error}") from None
    return dict(values)


def _within_ceiling(approval: Approval, target: Mapping[str, int]) -> None:
    for behaviour, bp in sorted(target.items()):
        if behaviour not in approval.ceiling:
            raise NeedsApproval(f"{behaviour} is not in the approval; that needs a new approval")
        allowed = approval.ceiling[behaviour]
        if bp > allowed:
            raise NeedsApproval(
                f"raising {behaviour} to {format_percentage(bp)} goes above the approved "
                f"{format_percentage(allowed)}: that needs a new approval"
            )


def _words(state: State) -> str:
    return state.value.replace("_", " ")


def _a(state: State) -> str:
    """The state in words after its article: "an active", "a rolled back"."""
    return with_article(_words(state))
