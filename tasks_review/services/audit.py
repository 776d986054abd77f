"""The audit trail: every write records an AuditEvent in the same transaction as the change.

The training floor records its own writes through this one function too.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Model

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
