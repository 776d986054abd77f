"""Reads for deployments: rows as the core's dataclasses, the held-out gate computed from
rollouts, the route endpoint's snapshot and answer, API clients by token, and serving configs.

The gate is computed here, never stored by hand: the adapter's rollouts and the base agent's on
the gated behaviour's held-out tasks, each scored by the harness against every behaviour those
tasks belong to (so a gain on one cannot hide a regression on another). A rollout is the
adapter's only when the serving side recorded the registered artifact's digest for it
(``Rollout.served_sha256``); one that merely names the adapter (``--ak adapter=``) is
unattributed: counted on the page, for neither side.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import shlex
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from groundwork.models import AuditEvent
from groundwork.services.audit import audit_type
from training.core.deploy import route as routing
from training.core.deploy import serving
from training.core.deploy.gate import (
    BehaviourRow,
    GateThresholds,
    GateVerdict,
    RolloutOutcome,
    Side,
    evaluate_gate,
)
from training.core.deploy.states import Approval, Drill, PendingDrill, State
from training.core.deploy.states import Deployment as CoreDeployment
from training.core.facts import TrajectoryFacts
from training.core.harness import evaluate
from training.core.spec import BehaviourSpec, load_spec
from trajectories.store import DbBlobs

from ..models import (
    Adapter,
    ApiClient,
    Behaviour,
    BehaviourTask,
    BehaviourVersion,
    Deployment,
    DeploymentShare,
    DeploymentUsage,
    Rollout,
)
from .grading import allowed
from .provenance import Admission, Use

log = logging.getLogger(__name__)
TOKEN_PREFIX = "t2e"

# -- rows as the core sees them ------------------------------------------------------------------


def deployment_core(row: Deployment) -> CoreDeployment:
    """The deployment as ``training.core.deploy.states`` takes it: latest approval, latest drill,
    the drill in progress, and the three percentage maps from its share rows."""
    shares = list(row.shares.select_related("behaviour"))
    approval = row.approvals.select_related("approver").first()
    return CoreDeployment(
        adapter=row.adapter.core(),
        proposer=row.proposed_by.get_username(),
        requested={s.behaviour.slug: s.requested for s in shares if s.requested is not None},
        state=State(row.state),
        approval=None
        if approval is None
        else Approval(
            approver=approval.approver.get_username(),
            at=approval.at,
            ceiling=approval.ceiling,
            gate=approval.summary,
        ),
        drill=None
        if row.drill_answered_at is None or row.drill_started_at is None
        else Drill(
            started_at=row.drill_started_at,
            answered_at=row.drill_answered_at,
            model=row.drill_model,
            adapter=row.drill_adapter or None,
        ),
        pending_drill=None
        if row.pending_drill_at is None
        else PendingDrill(started_at=row.pending_drill_at, resume=State(row.pending_drill_resume)),
        percentages={s.behaviour.slug: s.live for s in shares if s.live is not None},
        superseded_by=str(row.superseded_by_id or ""),
        reason=row.reason,
        ident=str(row.pk),
    )


def deployments_with_related() -> QuerySet[Deployment]:
    return Deployment.objects.select_related(
        "adapter__behaviour", "adapter__registered_by", "proposed_by"
    )


# -- the held-out gate ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GateRollout:
    """One rollout behind the gate, as the page lists it beside the verdict."""

    id: int
    task: str
    agent: str
    reward: float
    trajectory_id: int | None
    passed: bool  # on the behaviour of the row it is listed under


@dataclass(frozen=True, slots=True)
class GateRow:
    behaviour: str
    row: BehaviourRow
    adapter: tuple[GateRollout, ...]
    base: tuple[GateRollout, ...]

    @property
    def adapter_rate(self) -> str:
        return _percent(self.row.adapter.pass_rate)

    @property
    def base_rate(self) -> str:
        return _percent(self.row.base.pass_rate)

    @property
    def delta(self) -> str:
        if self.row.delta is None:
            return "—"
        return f"{self.row.delta * 100:+.1f}".removesuffix(".0") + " pts"

    @property
    def listed(self) -> int:
        return len(self.adapter) + len(self.base)

    @property
    def sides(self) -> tuple[tuple[str, tuple[GateRollout, ...]], ...]:
        return (("adapter", self.adapter), ("base agent", self.base))


def _percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate * 100:.1f}".removesuffix(".0") + "%"


@dataclass(frozen=True, slots=True)
class GateReport:
    verdict: GateVerdict
    rows: tuple[GateRow, ...]
    held_out_tasks: int  # of the gated behaviour
    not_graded: int  # rollouts of either side on those tasks without a verified reward yet
    # Rollouts on those tasks that name the adapter without the serving side having recorded its
    # registered artifact digest: they count for neither side.
    unattributed: int = 0

    @property
    def min_pass_rate(self) -> str:
        return _percent(self.verdict.thresholds.min_pass_rate)

    @property
    def tolerance(self) -> str:
        return _percent(self.verdict.thresholds.tolerance).removesuffix("%")


@dataclass(frozen=True, slots=True)
class GateInput:
    outcomes: list[RolloutOutcome]  # one per (graded rollout, behaviour scoring its task)
    rollouts: dict[int, dict[str, Any]]  # the graded ones, by id
    not_graded: int  # of either side, still waiting for a grade
    unattributed: int  # naming the adapter without its served digest


def gate_outcomes(adapter: Adapter) -> GateInput:
    """The gate's input on the adapter's held-out tasks. The adapter's side is what serving
    recorded its artifact digest for; the base agent's, the base model with no adapter named and
    none served."""
    held = gate_tasks(adapter)
    scoring: dict[int, list[tuple[str, BehaviourSpec]]] = defaultdict(list)
    specs = _latest_specs(
        BehaviourTask.objects.filter(candidate_id__in=held).values_list("behaviour_id", flat=True)
    )
    for candidate_id, behaviour_id in BehaviourTask.objects.filter(
        candidate_id__in=held
    ).values_list("candidate_id", "behaviour_id"):
        if behaviour_id in specs:
            scoring[candidate_id].append(specs[behaviour_id])
    version = adapter.core()
    served = Q(served_sha256=adapter.artifact_sha256)
    base = Q(adapter="", served_sha256="", model=adapter.base_model)
    rollouts = Rollout.objects.filter(served | base, candidate_id__in=held)
    claimed = Rollout.objects.filter(
        adapter__in=(version.served_name, version.key), candidate_id__in=held
    )
    graded = rollouts.filter(grade=Rollout.Grade.GRADED, reward__isnull=False, facts__isnull=False)
    blobs = DbBlobs()
    outcomes: list[RolloutOutcome] = []
    seen: dict[int, dict[str, Any]] = {}
    fields = ("id", "candidate_id", "candidate__task_name", "agent", "served_sha256", "reward")
    for row in graded.order_by("id").values(*fields, "facts", "trajectory_id").iterator():
        facts = replace(TrajectoryFacts.from_dict(row.pop("facts")), verified_reward=row["reward"])
        side = Side.ADAPTER if row["served_sha256"] == adapter.artifact_sha256 else Side.BASE
        seen[row["id"]] = {**row, "side": side}
        for slug, spec in scoring[row["candidate_id"]]:
            result = evaluate(spec, facts, blobs=blobs)
            outcomes.append(
                RolloutOutcome(
                    task=str(row["candidate_id"]),
                    behaviour=slug,
                    side=side,
                    passed=result.passed,
                    reward=result.reward,
                    rollout=str(row["id"]),
                )
            )
    return GateInput(
        outcomes=outcomes,
        rollouts=seen,
        not_graded=rollouts.count() - len(seen),
        unattributed=claimed.exclude(served).count(),
    )


def gate_floor() -> GateThresholds:
    """The gate's floors from settings: the loosest thresholds a proposal may ask for."""
    conf = settings.TRAJ2ENV
    return GateThresholds(
        min_rollouts=int(conf["GATE_MIN_ROLLOUTS"]),
        min_pass_rate=float(conf["GATE_MIN_PASS_RATE"]),
        tolerance=float(conf["GATE_MAX_TOLERANCE"]),
    )


def gate_tasks(adapter: Adapter) -> list[int]:
    """The held-out tasks the gate measures: the behaviour's, through the provenance rule
    (accepted on the desk, kept by the current verifier)."""
    tasks = BehaviourTask.objects.filter(
        allowed(adapter.behaviour),
        behaviour_id=adapter.behaviour_id,
        split=BehaviourTask.Split.HELD_OUT,
    ).select_related("candidate")
    admission = Admission(adapter.behaviour, Use.GATE, (t.candidate for t in tasks))
    return admission.admitted_tasks


def _latest_specs(behaviour_ids: Any) -> dict[int, tuple[str, BehaviourSpec]]:
    specs: dict[int, tuple[str, BehaviourSpec]] = {}
    versions = BehaviourVersion.objects.filter(behaviour_id__in=set(behaviour_ids)).select_related(
        "behaviour"
    )
    for version in versions.order_by("behaviour_id", "-number"):
        if version.behaviour_id not in specs:
            spec = load_spec({**version.spec, "version": version.number})
            specs[version.behaviour_id] = (version.behaviour.slug, spec)
    return specs


def gate_report(adapter: Adapter, thresholds: GateThresholds) -> GateReport:
    """The gate for ``adapter`` now, with the rollouts behind every number."""
    found = gate_outcomes(adapter)
    outcomes, rollouts = found.outcomes, found.rollouts
    verdict = evaluate_gate(
        outcomes, adapter=adapter.key, gated=adapter.behaviour.slug, thresholds=thresholds
    )
    passed = {(o.rollout, o.behaviour): o.passed for o in outcomes}

    def listed(row: BehaviourRow, ids: tuple[str, ...]) -> tuple[GateRollout, ...]:
        return tuple(
            GateRollout(
                id=int(i),
                task=rollouts[int(i)]["candidate__task_name"] or f"candidate {i}",
                agent=rollouts[int(i)]["agent"],
                reward=rollouts[int(i)]["reward"],
                trajectory_id=rollouts[int(i)]["trajectory_id"],
                passed=passed[(i, row.behaviour)],
            )
            for i in sorted(ids, key=int)
        )

    rows = tuple(
        GateRow(
            behaviour=row.behaviour,
            row=row,
            adapter=listed(row, row.adapter.rollout_ids),
            base=listed(row, row.base.rollout_ids),
        )
        for row in verdict.rows
    )
    held = len(gate_tasks(adapter))
    return GateReport(
        verdict=verdict,
        rows=rows,
        held_out_tasks=held,
        not_graded=found.not_graded,
        unattributed=found.unattributed,
    )


# -- the route -----------------------------------------------------------------------------------


def route_snapshot(behaviour: str) -> routing.RouteSnapshot:
    """The route's view of one behaviour in one indexed query: its base model and every
    deployment with a share in it (no row: an unknown behaviour). An active deployment counts
    where it is live; the others are named so the answer can say why it is the base model."""
    today = timezone.now().date()  # UTC: TIME_ZONE is UTC, and budget days are UTC days
    with connection.cursor() as cursor:
        cursor.execute(
            _route_sql(),
            [connection.ops.adapt_datefield_value(today), True, behaviour],
        )
        rows = cursor.fetchall()
    entries = []
    base_model = None
    salt = ""
    for base, deployment, state, live, name, version, served, salted, over_budget in rows:
        base_model = base or None
        if deployment is None or (state == State.ACTIVE and live is None):
            continue
        if state == State.ACTIVE:
            salt = salted
        entries.append(
            routing.RouteEntry(
                deployment=str(deployment),
                state=State(state),
                adapter=name,
                version=version,
                served_name=served,
                basis_points=live if state == State.ACTIVE else 0,
                budget_exceeded=bool(over_budget),
            )
        )
    behaviours = (
        {behaviour: routing.BehaviourRoutes(base_model=base_model, entries=tuple(entries))}
        if rows
        else {}
    )
    # The live deployment's salt: empty by default, so the same subjects stay first from one
    # version to the next.
    return routing.RouteSnapshot(
        default_base_model=settings.TRAJ2ENV_BASE_MODEL, behaviours=behaviours, salt=salt
    )


@functools.cache
def _route_sql() -> str:
    # Written out rather than built with the ORM: building this query took about twenty times
    # as long as running it (5 ms against 0.25 ms, measured), and serving asks on every request.
    q = connection.ops.quote_name
    b, s, d, a, u = (
        q(m._meta.db_table)
        for m in (Behaviour, DeploymentShare, Deployment, Adapter, DeploymentUsage)
    )
    return (
        "SELECT b.base_model, s.deployment_id, d.state, s.live, a.name, a.version, "
        "a.served_name, d.salt, EXISTS (SELECT 1 FROM "
        f"{u} x WHERE x.deployment_id = s.deployment_id AND x.day = %s AND x.exceeded = %s) "
        f"FROM {b} b LEFT JOIN {s} s ON s.behaviour_id = b.id "
        f"LEFT JOIN {d} d ON d.id = s.deployment_id "
        f"LEFT JOIN {a} a ON a.id = d.adapter_id "
        "WHERE b.slug = %s "
        # The most recently changed first: when nothing serves, the answer names the deployment
        # that stopped last, not whichever row the database happened to return first.
        "ORDER BY d.updated_at DESC, d.id DESC"
    )


# How long the route's reads may wait on a lock: serving asks on every request, and the base
# model answered at once beats any answer after the 20 s the rest of the app rides out.
ROUTE_WAIT_SECONDS = 0.25


@contextmanager
def route_reads(seconds: float = ROUTE_WAIT_SECONDS) -> Iterator[None]:
    """The route's reads wait on a lock at most ``seconds``, then fail (the caller answers the
    base model); the connection's usual waits are back afterwards. On this thread's connection
    only: SQLite's busy timeout (the connect timeout too, when the read has to open one), or
    PostgreSQL's statement_timeout and lock_timeout. Set on the raw connection, so they add no
    query to what the route is measured by."""
    if connection.vendor == "sqlite":
        usual = connection.settings_dict
        options = usual.get("OPTIONS", {})
        connection.settings_dict = {**usual, "OPTIONS": {**options, "timeout": seconds}}
        try:
            connection.ensure_connection()
            connection.connection.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
            yield
        finally:
            connection.settings_dict = usual
            _quietly(f"PRAGMA busy_timeout = {int(options.get('timeout', 5) * 1000)}")
        return
    if connection.vendor == "postgresql":
        ms = int(seconds * 1000)
        connection.ensure_connection()
        _quietly(f"SET statement_timeout = {ms}", f"SET lock_timeout = {ms}", strict=True)
        try:
            yield
        finally:
            _quietly("RESET statement_timeout", "RESET lock_timeout")
        return
    yield


def _quietly(*statements: str, strict: bool = False) -> None:
    try:
        raw = connection.connection
        for sql in statements if raw is not None else ():
            raw.execute(sql)  # sqlite3 and psycopg 3 connections both execute directly
    except Exception:
        if strict:
            raise
        # A connection that cannot take its usual waits back is not worth keeping.
        log.warning("route: could not restore the connection's waits; closing it")
        connection.close()


def route_answer(
    behaviour: str, subject: str, *, deployment: int | None = None
) -> routing.RouteAnswer:
    """What the endpoint answers: never raises, the base model on every fault (logged).

    ``deployment``: what it answers as far as that deployment goes, the others left out. A kill
    drill asks this way: while a new version is drilled, the endpoint rightly keeps answering
    the version that serves now, and the drill is about whether the killed one still answers.
    """

    def load() -> routing.RouteSnapshot:
        snapshot = route_snapshot(behaviour)
        if deployment is None:
            return snapshot
        ours = str(deployment)
        return replace(
            snapshot,
            behaviours={
                b: replace(r, entries=tuple(e for e in r.entries if e.deployment == ours))
                for b, r in snapshot.behaviours.items()
            },
        )

    return routing.route(
        load,
        behaviour,
        subject,
        default_base_model=settings.TRAJ2ENV_BASE_MODEL,
        on_error=lambda error: log.exception("route %s failed", behaviour, exc_info=error),
    )


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def api_client_for(authorization: str) -> ApiClient | None:
    """The live API client whose token the ``Authorization: Bearer`` header carries, or None.
    The row is found by the token's public key; the secret part is compared in constant time."""
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    prefix, _, rest = token.partition("_")
    key, _, secret = rest.partition("_")
    if prefix != TOKEN_PREFIX or not key or not secret:
        return None
    q = connection.ops.quote_name
    with connection.cursor() as cursor:  # asked on every route request: see _route_sql
        cursor.execute(
            f"SELECT id, name, token_sha256 FROM {q(ApiClient._meta.db_table)} "
            f"WHERE {q('key')} = %s AND revoked_at IS NULL",
            [key],
        )
        row = cursor.fetchone()
    if row is None or not hmac.compare_digest(row[2], token_sha256(token)):
        return None
    return ApiClient(id=row[0], name=row[1], key=key, token_sha256=row[2])


# -- pages ---------------------------------------------------------------------------------------


def deployment_events(row: Deployment) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(
        target_type=audit_type(Deployment), target_id=str(row.pk)
    ).select_related("actor")


def usage_today(row: Deployment) -> DeploymentUsage | None:
    return row.usage.filter(day=timezone.now().date()).first()


def previous_versions(row: Deployment) -> QuerySet[Deployment]:
    """The deployments of the same adapter name, newest first: what a rollback can return to."""
    return (
        deployments_with_related()
        .filter(adapter__name=row.adapter.name)
        .exclude(pk=row.pk)
        .order_by("-id")
    )


# -- serving -------------------------------------------------------------------------------------


def serving_deployments() -> list[CoreDeployment]:
    """Every deployment that serves or could serve again without a restart: active ones, killed
    ones (a rollback may bring theirs back) and the retired versions they replaced."""
    rows = deployments_with_related().filter(
        state__in=(Deployment.State.ACTIVE, Deployment.State.KILLED, Deployment.State.RETIRED)
    )
    return [deployment_core(row) for row in rows]


def base_models() -> list[str]:
    """The models serving must know: the default, each behaviour's own, each adapter's base."""
    names = {settings.TRAJ2ENV_BASE_MODEL}
    names.update(Behaviour.objects.exclude(base_model="").values_list("base_model", flat=True))
    names.update(Adapter.objects.values_list("base_model", flat=True))
    return sorted(names)


@dataclass(frozen=True, slots=True)
class ServingConfig:
    adapters: tuple[serving.ServedAdapter, ...]
    vllm: dict[str, list[str]]  # base model -> its `vllm serve` argv
    litellm: str  # the proxy config, YAML

    @property
    def vllm_shell(self) -> dict[str, str]:
        """Each ``vllm serve`` as one shell line, quoted (its --lora-modules values are JSON)."""
        return {model: shlex.join(argv) for model, argv in self.vllm.items()}

    @property
    def vllm_script(self) -> str:
        """``vllm.sh``: one server per base model; run each line on its own GPU host."""
        header = "#!/bin/sh\n# Generated by traj2env from the active deployments.\n"
        return header + "\n".join(self.vllm_shell.values()) + "\n"


def serving_config(*, endpoints: dict[str, str], adapter_root: str | None) -> ServingConfig:
    """vLLM's arguments per base model and the LiteLLM proxy config for the serving state now;
    raises ``serving.ServingError`` with the problem in words."""
    adapters = serving.served_adapters(serving_deployments(), adapter_root=adapter_root)
    vllm = {
        base: serving.vllm_command(
            base,
            [a for a in adapters if a.base_model == base],
            port=serving.endpoint_port(endpoints[base]),
        )
        for base in sorted(endpoints)
    }
    config = serving.litellm_config(endpoints=endpoints, adapters=adapters)
    return ServingConfig(adapters=adapters, vllm=vllm, litellm=serving.litellm_yaml(config))
