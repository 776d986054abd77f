"""The review desk's audit trail: every write records an AuditEvent in its own transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from ..models import AuditEvent, Candidate, DatasetExport


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def audit_event_record(
    *,
    actor: AbstractBaseUser | None,
    verb: str,
    target: Candidate | DatasetExport,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> AuditEvent:
    target_type = "candidate" if isinstance(target, Candidate) else "dataset_export"
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        verb=verb,
        target_type=target_type,
        target_id=str(target.pk),
        before=before,
        after=after,
    )
