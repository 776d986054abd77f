"""Registering adapter versions: validated by the core, immutable once stored.

Registering the same content again is a no-op that returns the existing row (the first
registrar stays the registrar, the one the approval rule is about); the same (name, version)
with different content is refused, naming every field that differs.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from groundwork.access.errors import Conflict, Invalid, NotFound, require
from groundwork.services.audit import audit_event_record
from training.core.deploy.adapters import (
    AdapterError,
    AdapterVersion,
    local_rank_problem,
    registration_conflicts,
)
from trajectories.core.limits import echo

from ..models import Adapter, Behaviour
from ..roles import REGISTER_ADAPTER


def adapter_register(
    *,
    user: AbstractBaseUser,
    behaviour: str,
    name: str,
    version: str,
    eval_suite: str,
    base_model: str,
    training_plan: str,
    dataset_sha256: str,
    artifact_uri: str,
    artifact_sha256: str,
    rank: int,
) -> tuple[Adapter, bool]:
    """The adapter row and whether this call created it."""
    require(user, REGISTER_ADAPTER, "register adapters")
    row = Behaviour.objects.filter(slug=behaviour).first()
    if row is None:
        raise NotFound(f"no behaviour {echo(behaviour)}; add it before registering its adapters")
    try:
        candidate = AdapterVersion(
            name=name.strip(),
            version=version.strip(),
            behaviour=row.slug,
            eval_suite=eval_suite.strip(),
            base_model=base_model.strip(),
            training_plan=training_plan.strip(),
            dataset_sha256=dataset_sha256.strip().lower(),
            artifact_uri=artifact_uri.strip(),
            artifact_sha256=artifact_sha256.strip().lower(),
            rank=rank,
            registrar=user.get_username(),
        )
    except AdapterError as error:
        problems = {field: message for field, message in error.problems}
        said = "; ".join(f"{field.replace('_', ' ')}: {why}" for field, why in problems.items())
        raise Invalid(said, fields=problems) from None
    if problem := local_rank_problem(candidate):
        raise Invalid(f"rank: {problem}", fields={"rank": problem})
    try:
        with transaction.atomic():
            existing = (
                Adapter.objects.select_for_update()
                .select_related("behaviour", "registered_by")
                .filter(name=candidate.name, version=candidate.version)
                .first()
            )
            if existing is not None:
                return existing, _same_or_refused(existing, candidate)
            adapter = Adapter.objects.create(
                behaviour=row,
                name=candidate.name,
                version=candidate.version,
                eval_suite=candidate.eval_suite,
                base_model=candidate.base_model,
                training_plan=candidate.training_plan,
                dataset_sha256=candidate.dataset_sha256,
                artifact_uri=candidate.artifact_uri,
                artifact_sha256=candidate.artifact_sha256,
                rank=candidate.rank,
                served_name=candidate.served_name,
                registered_by=user,
            )
            audit_event_record(
                actor=user,
                verb="adapter.register",
                target=adapter,
                before=None,
                after={
                    "adapter": candidate.key,
                    "behaviour": candidate.behaviour,
                    "artifact_uri": candidate.artifact_uri,
                    "artifact_sha256": candidate.artifact_sha256,
                },
            )
    except IntegrityError:
        # Another registration of the same (name, version) committed between our read and write.
        existing = Adapter.objects.select_related("behaviour", "registered_by").get(
            name=candidate.name, version=candidate.version
        )
        return existing, _same_or_refused(existing, candidate)
    return adapter, True


def _same_or_refused(existing: Adapter, candidate: AdapterVersion) -> bool:
    differs = registration_conflicts(existing.core(), candidate)
    if differs:
        raise Conflict(
            f"{candidate.key} is registered with other content ({', '.join(differs)} "
            "differ); versions are immutable, register a new version"
        )
    return False
