"""The route endpoint's answer: which model serves this behaviour for this subject.

>>> snap = RouteSnapshot(
...     default_base_model="qwen-coder",
...     behaviours={"failing-test-repair": BehaviourRoutes(entries=(RouteEntry(
...         deployment="7", state=State.ACTIVE, adapter="failing-test-repair-lora",
...         version="1.0", served_name="failing-test-repair-lora-v1.0", basis_points=10_000),))})
>>> answer = route(lambda: snap, "failing-test-repair", "repo:acme/api", default_base_model="qwen")
>>> answer.to_dict()  # doctest: +NORMALIZE_WHITESPACE
{'model': 'failing-test-repair-lora-v1.0', 'adapter': 'failing-test-repair-lora',
 'version': '1.0', 'deployment': '7', 'reason': 'adapter'}
>>> route(lambda: snap, "read-before-edit", "repo:acme/api", default_base_model="qwen")
RouteAnswer(model='qwen-coder', reason='unknown_behaviour', adapter=None, version=None, \
deployment=None)
>>> def database_down() -> RouteSnapshot:
...     raise OSError("database is locked")
>>> route(database_down, "failing-test-repair", "repo:acme/api", default_base_model="qwen")
RouteAnswer(model='qwen', reason='error', adapter=None, version=None, deployment=None)

``route`` never raises: an unknown behaviour, a killed, rolled back or retired deployment, an
exceeded budget, a subject outside the rollout and any exception while loading the snapshot or
deciding all answer the base model, with the reason. Serving infrastructure asks on every
request, and the one answer that is always safe is the base model. ``decide`` is the same
decision without the safety net, for tests and for callers that want the exception.

An adapter answer's ``model`` is the adapter version's served name (the name vLLM's
``--lora-modules`` and the LiteLLM config give it), so a client can pass ``model`` on as it is.
A base answer's ``model`` is the behaviour's base model, or the default where it has none (and
where the snapshot could not be read at all).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from training.core.deploy.bucketing import check_basis_points, inside
from training.core.deploy.states import Deployment, State


class Reason(StrEnum):
    ADAPTER = "adapter"
    UNKNOWN_BEHAVIOUR = "unknown_behaviour"
    NO_DEPLOYMENT = "no_deployment"
    NOT_ACTIVE = "not_active"  # proposed or approved, not yet serving
    KILLED = "killed"
    ROLLED_BACK = "rolled_back"
    RETIRED = "retired"
    BUDGET_EXCEEDED = "budget_exceeded"
    OUTSIDE_ROLLOUT = "outside_rollout"
    NO_SUBJECT = "no_subject"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class RouteAnswer:
    model: str
    reason: str  # a Reason
    adapter: str | None = None  # None: the base model
    version: str | None = None
    deployment: str | None = None  # the deployment the answer is about, when there is one

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", str(self.reason))  # a plain string in reprs and JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "adapter": self.adapter,
            "version": self.version,
            "deployment": self.deployment,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class RouteEntry:
    """One deployment as the route sees it for one behaviour."""

    deployment: str
    state: State
    adapter: str
    version: str
    served_name: str
    basis_points: int  # this behaviour's rollout
    budget_exceeded: bool = False


@dataclass(frozen=True, slots=True)
class BehaviourRoutes:
    base_model: str | None = None  # the behaviour's own; None uses the snapshot's default
    # The most recently changed deployment first: of two killed ones, the answer names the
    # first, the one killed last.
    entries: tuple[RouteEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class RouteSnapshot:
    default_base_model: str  # TRAJ2ENV_BASE_MODEL
    behaviours: Mapping[str, BehaviourRoutes] = field(default_factory=dict)
    salt: str = ""  # bucketing salt (see bucketing)

    def __post_init__(self) -> None:
        object.__setattr__(self, "behaviours", MappingProxyType(dict(self.behaviours)))


class InconsistentSnapshot(Exception):
    """The snapshot breaks an invariant the services keep (one active deployment per behaviour)."""


# When nothing is active, the answer names the most telling of the others: a kill is news to
# whoever asks, a retirement is routine. Within a state, the newest (entries come newest first).
_INACTIVE_REASONS = (
    (State.KILLED, Reason.KILLED),
    (State.ROLLED_BACK, Reason.ROLLED_BACK),
    (State.APPROVED, Reason.NOT_ACTIVE),
    (State.PROPOSED, Reason.NOT_ACTIVE),
    (State.RETIRED, Reason.RETIRED),
)


def decide(snapshot: RouteSnapshot, behaviour: str, subject: str) -> RouteAnswer:
    """The answer for ``subject`` asking for ``behaviour``; raises on a broken snapshot."""
    routes = snapshot.behaviours.get(behaviour)
    if routes is None:
        return RouteAnswer(model=snapshot.default_base_model, reason=Reason.UNKNOWN_BEHAVIOUR)
    base = routes.base_model or snapshot.default_base_model
    active = [e for e in routes.entries if e.state is State.ACTIVE]
    if len(active) > 1:
        names = ", ".join(sorted(e.deployment for e in active))
        raise InconsistentSnapshot(f"{behaviour} has {len(active)} active deployments: {names}")
    if not active:
        for state, reason in _INACTIVE_REASONS:
            for entry in routes.entries:
                if entry.state is state:
                    return RouteAnswer(model=base, deployment=entry.deployment, reason=reason)
        return RouteAnswer(model=base, reason=Reason.NO_DEPLOYMENT)
    entry = active[0]
    check_basis_points(entry.basis_points)
    if entry.budget_exceeded:
        return RouteAnswer(model=base, deployment=entry.deployment, reason=Reason.BUDGET_EXCEEDED)
    if not subject:
        return RouteAnswer(model=base, deployment=entry.deployment, reason=Reason.NO_SUBJECT)
    if not inside(behaviour, subject, entry.basis_points, snapshot.salt):
        return RouteAnswer(model=base, deployment=entry.deployment, reason=Reason.OUTSIDE_ROLLOUT)
    return RouteAnswer(
        model=entry.served_name,
        adapter=entry.adapter,
        version=entry.version,
        deployment=entry.deployment,
        reason=Reason.ADAPTER,
    )


def route(
    load: Callable[[], RouteSnapshot],
    behaviour: str,
    subject: str,
    *,
    default_base_model: str,
    on_error: Callable[[BaseException], None] | None = None,
) -> RouteAnswer:
    """``decide`` over the snapshot ``load`` returns, answering the base model on any exception
    (``on_error`` sees it first, to log it; an exception there is swallowed too)."""
    snapshot: RouteSnapshot | None = None
    try:
        snapshot = load()
        return decide(snapshot, behaviour, subject)
    except Exception as error:
        if on_error is not None:
            try:
                on_error(error)
            except Exception:  # a failing logger must not turn the answer into a 500
                pass
        return RouteAnswer(
            model=_base_model(snapshot, behaviour, default_base_model), reason=Reason.ERROR
        )


def _base_model(snapshot: RouteSnapshot | None, behaviour: str, default: str) -> str:
    try:
        if snapshot is not None:
            routes = snapshot.behaviours.get(behaviour)
            return (routes.base_model if routes else None) or snapshot.default_base_model or default
    except Exception:  # the snapshot itself may be what is broken
        pass
    return default


def snapshot_of(
    deployments: Iterable[Deployment],
    *,
    default_base_model: str,
    base_models: Mapping[str, str | None] | None = None,
    budget_exceeded: Collection[str] = (),
    salt: str = "",
) -> RouteSnapshot:
    """The route's view of ``deployments``: every behaviour in ``base_models`` (the known
    behaviours and their own base models) plus every behaviour a deployment names.
    ``budget_exceeded`` holds the ``ref`` of deployments whose day's cap is used up."""
    entries: dict[str, list[RouteEntry]] = {b: [] for b in base_models or {}}
    for d in deployments:
        shares = d.percentages or (d.approval.ceiling if d.approval else d.requested)
        for behaviour, bp in shares.items():
            entries.setdefault(behaviour, []).append(
                RouteEntry(
                    deployment=d.ref,
                    state=d.state,
                    adapter=d.adapter.name,
                    version=d.adapter.version,
                    served_name=d.adapter.served_name,
                    basis_points=bp if d.state is State.ACTIVE else 0,
                    budget_exceeded=d.ref in budget_exceeded,
                )
            )
    models = base_models or {}
    return RouteSnapshot(
        default_base_model=default_base_model,
        behaviours={
            b: BehaviourRoutes(base_model=models.get(b), entries=tuple(rows))
            for b, rows in sorted(entries.items())
        },
        salt=salt,
    )
