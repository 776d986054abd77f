"""The audit log: its search and facets, and what blind review keeps hidden in it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from django.contrib.auth.models import AbstractBaseUser, User
from django.db.models import QuerySet

from ..models import AuditEvent, Candidate
from .reviewable import bound_by_blind_review


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


def audit_search(filters: AuditFilters) -> QuerySet[AuditEvent]:
    qs = AuditEvent.objects.select_related("actor").order_by("-id")
    if filters.actor:
        qs = qs.filter(actor__username=filters.actor)
    if filters.verb:
        qs = qs.filter(verb=filters.verb)
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
    return {"verbs": list(verbs), "actors": list(actors)}


BLIND_VERBS = ("review.submit",)


def audit_blinded(events: Sequence[AuditEvent], user: AbstractBaseUser) -> set[int]:
    """Events whose details this user may not read yet: another reviewer's decision on a candidate
    still pending, whether or not the user has reviewed it. The audit log must not undo blind
    review (`reviewable.bound_by_blind_review`)."""
    if not bound_by_blind_review(user):
        return set()
    others = [
        e
        for e in events
        if e.verb in BLIND_VERBS
        and e.target_type == "candidate"
        and e.actor_id != user.pk
        and e.target_id.isdigit()
    ]
    if not others:
        return set()
    pending = set(
        Candidate.objects.filter(
            pk__in={int(e.target_id) for e in others}, review_status=Candidate.ReviewStatus.PENDING
        ).values_list("pk", flat=True)
    )
    return {e.pk for e in others if int(e.target_id) in pending}
