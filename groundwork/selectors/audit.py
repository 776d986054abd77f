"""The audit log: its search and facets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from django.contrib.auth.models import User
from django.db.models import QuerySet

from ..models import AuditEvent


@dataclass(frozen=True)
class AuditFilters:
    actor: str = ""
    verb: str = ""
    target: str = ""  # "candidate", "candidate:42", or "42"

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> AuditFilters:
        return cls(**{f.name: (query.get(f.name) or "").strip()[:100] for f in fields(cls)})

    @property
    def active(self) -> bool:
        return bool(self.actor or self.verb or self.target)


# Verbs the log was written with before a concept was renamed: the log is append-only, so
# its old rows keep them, and a search by the new verb finds both.
FORMER_VERBS = {".hold": ".reserve"}


def _verbs(verb: str) -> list[str]:
    """``verb`` and what the same act was called in older rows."""
    return [verb] + [
        verb[: -len(new)] + old for new, old in FORMER_VERBS.items() if verb.endswith(new)
    ]


def _current(verb: str) -> str:
    for new, old in FORMER_VERBS.items():
        if verb.endswith(old):
            return verb[: -len(old)] + new
    return verb


def audit_search(filters: AuditFilters) -> QuerySet[AuditEvent]:
    qs = AuditEvent.objects.select_related("actor").order_by("-id")
    if filters.actor:
        qs = qs.filter(actor__username=filters.actor)
    if filters.verb:
        qs = qs.filter(verb__in=_verbs(_current(filters.verb)))
    if filters.target:
        kind, _, ident = filters.target.partition(":")
        if ident:
            qs = qs.filter(target_type=kind, target_id=ident)
        elif kind.isdigit():
            qs = qs.filter(target_id=kind)
        else:
            qs = qs.filter(target_type=kind)
    return qs


def audit_facets() -> dict[str, list[str]]:
    verbs = AuditEvent.objects.order_by("verb").values_list("verb", flat=True).distinct()
    actors = (
        User.objects.filter(pk__in=AuditEvent.objects.values("actor").distinct())
        .order_by("username")
        .values_list("username", flat=True)
    )
    return {"verbs": sorted({_current(v) for v in verbs}), "actors": list(actors)}
