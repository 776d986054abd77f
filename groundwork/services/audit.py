"""The audit trail: every write records an AuditEvent in the same transaction as the change.

The training floor records its own writes through this one function too.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Model

from groundwork.access.errors import NotPermitted, require

from ..models import AuditEvent


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def audit_event_record(
    *,
    actor: AbstractBaseUser | None,
    verb: str,
    target: Model,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> AuditEvent:
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        verb=verb,
        target_type=audit_type(target),
        target_id=str(target.pk),
        before=before,
        after=after,
    )


def audit_type(target: Model | type[Model]) -> str:
    """The target's kind as the log names it: ``DatasetExport`` is ``dataset_export``."""
    name = target.__name__ if isinstance(target, type) else type(target).__name__
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def require_audited(
    user: AbstractBaseUser,
    perm: str,
    action: str,
    *,
    verb: str,
    target: type[Model],
    target_id: object,
) -> None:
    """``require``, leaving "<verb>.refused" on the target when it refuses: who tried to approve,
    kill or decide without the role is part of the record, not only who did. Written before the
    service opens its transaction, so the refusal that follows does not roll it back."""
    try:
        require(user, perm, action)
    except NotPermitted as error:
        AuditEvent.objects.create(
            actor=user if user.is_authenticated else None,
            verb=f"{verb}.refused",
            target_type=audit_type(target),
            target_id=str(target_id),
            before=None,
            after={"refused": str(error), "permission": perm},
        )
        raise
