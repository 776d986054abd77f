"""Rows for the deployment tests: behaviours whose tasks are all held out, adapters registered
through the service, and graded rollouts of the adapter and of the base agent on those tasks."""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import Group, User

from groundwork.access.roles import APPROVER, REVIEWER
from tasks_review.models import Candidate
from tests.training.core.helpers import Session
from tests.training.factories import claimed_only, loop_candidate, repaired
from training.core.catalogue import catalogue
from training.models import Adapter, Behaviour, Deployment, Rollout
from training.services import deploy
from training.services.behaviours import behaviour_create, behaviour_tasks_add
from training.services.deploy_adapters import adapter_register

REPAIR = "failing-test-repair"
READ = "read-before-edit"
BASE_MODEL = "qwen-coder"
_seq = itertools.count(1)


def blind_repair() -> Session:
    """Fixes the bug and proves it with the tests, but edits a file it never read."""
    s = Session()
    s.run("pytest tests/test_invoice.py", output="1 failed", exit_code=1)
    s.edit("invoice.py", "return 0", "return 1")
    s.run("pytest tests/test_invoice.py", output="1 passed")
    return s.say("Fixed: the test passes now.")


SESSIONS: dict[str, Callable[[], Session]] = {
    "repaired": repaired,
    "claimed_only": claimed_only,
    "blind_repair": blind_repair,
}


@functools.cache
def facts_of(kind: str) -> dict[str, Any]:
    # Replaying a synthetic session costs milliseconds; the gate tests need dozens of rollouts.
    return SESSIONS[kind]().facts().to_dict()


def held_out_behaviour(
    slug: str = REPAIR, *, tasks: int = 0, candidates: Iterable[Candidate] = ()
) -> Behaviour:
    """A behaviour with every task held out (fraction 1.0), so the gate sees all of them."""
    behaviour = behaviour_create(user=None, spec=catalogue()[slug].to_dict(), base_model=BASE_MODEL)
    behaviour.held_out_fraction = 1.0
    behaviour.save(update_fields=["held_out_fraction"])
    chosen = list(candidates) or [loop_candidate() for _ in range(tasks)]
    behaviour_tasks_add(user=None, behaviour_id=behaviour.pk, candidate_ids=[c.pk for c in chosen])
    return behaviour


def tasks_of(behaviour: Behaviour) -> list[Candidate]:
    return [t.candidate for t in behaviour.tasks.select_related("candidate").order_by("id")]


def artifact_digest(slug: str, version: str) -> str:
    """The weights' digest a factory registers: one of its own per version."""
    return hashlib.sha256(f"{slug}-lora@{version}".encode()).hexdigest()


def register(user: User, behaviour: Behaviour, version: str = "1.0", **overrides: Any) -> Adapter:
    fields: dict[str, Any] = {
        "behaviour": behaviour.slug,
        "name": f"{behaviour.slug}-lora",
        "version": version,
        "eval_suite": "repair-held-out",
        "base_model": BASE_MODEL,
        "training_plan": "plan-7",
        "dataset_sha256": "a" * 64,
        "artifact_uri": f"s3://adapters/{behaviour.slug}-lora/{version}",
        "artifact_sha256": artifact_digest(behaviour.slug, version),
        "rank": 16,
    }
    fields.update(overrides)
    adapter, _ = adapter_register(user=user, **fields)
    return adapter


def rollouts(
    candidates: Iterable[Candidate],
    kind: str,
    *,
    adapter: Adapter | str | None = None,
    model: str = BASE_MODEL,
    reward: float = 1.0,
    each: int = 1,
    grade: str = Rollout.Grade.GRADED,
    served_sha256: str | None = None,
) -> list[Rollout]:
    """``each`` graded rollouts per task, of the adapter (its served name, with the digest the
    serving side recorded: the registered artifact's unless ``served_sha256`` says otherwise; or
    a served name alone, a claim with no digest) or of the base agent."""
    served = adapter.served_name if isinstance(adapter, Adapter) else adapter or ""
    if served_sha256 is None:
        served_sha256 = adapter.artifact_sha256 if isinstance(adapter, Adapter) else ""
    made = []
    for candidate in candidates:
        for _ in range(each):
            made.append(
                Rollout.objects.create(
                    candidate=candidate,
                    trial_name=f"{candidate.task_name}__deploy{next(_seq)}",
                    agent="claude-code",
                    model=model,
                    adapter=served,
                    served_sha256=served_sha256,
                    reward=reward if grade == Rollout.Grade.GRADED else None,
                    grade=grade,
                    facts=facts_of(kind),
                )
            )
    return made


def approver_who_reviews(name: str = "frank") -> User:
    """Someone in both roles: may register, propose and approve, so only the two-person rule
    stands between them and approving their own work."""
    user = User.objects.create_user(username=name, password="pw-" + name)
    user.groups.add(Group.objects.get(name=REVIEWER), Group.objects.get(name=APPROVER))
    return user


@dataclass
class World:
    repair: Behaviour
    read: Behaviour
    tasks: list[Candidate]
    adapter: Adapter


def gated_world(
    registrar: User,
    *,
    tasks: int = 5,
    adapter_kind: str = "repaired",
    version: str = "1.0",
    each: int = 1,
) -> World:
    """failing-test-repair and read-before-edit on the same held-out tasks; the base agent
    repairs each properly, the adapter does as ``adapter_kind`` says."""
    repair = held_out_behaviour(REPAIR, tasks=tasks)
    chosen = tasks_of(repair)
    read = held_out_behaviour(READ, candidates=chosen)
    adapter = register(registrar, repair, version)
    rollouts(chosen, "repaired", each=each)
    rollouts(chosen, adapter_kind, adapter=adapter, each=each)
    return World(repair=repair, read=read, tasks=chosen, adapter=adapter)


def next_version(world: World, registrar: User, version: str, kind: str = "repaired") -> Adapter:
    adapter = register(registrar, world.repair, version)
    rollouts(world.tasks, kind, adapter=adapter)
    return adapter


def proposed(adapter: Adapter, proposer: User, percent: int = 10, **options: Any) -> Deployment:
    return deploy.deployment_propose(
        user=proposer,
        adapter_id=adapter.pk,
        percentages={adapter.behaviour.slug: percent * 100},
        **options,
    )


def live(adapter: Adapter, proposer: User, approver: User, percent: int = 10) -> Deployment:
    """Proposed, approved (gate and drill) and active."""
    d = proposed(adapter, proposer, percent)
    deploy.deployment_approve(user=approver, deployment_id=d.pk)
    return deploy.deployment_activate(user=proposer, deployment_id=d.pk)
