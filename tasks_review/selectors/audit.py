"""The audit log: its search and facets, and what blind review keeps hidden in it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from django.contrib.auth.models import AbstractBaseUser, User
from django.db.models import QuerySet

from ..models import AuditEvent, Candidate
from ..roles import REVIEW
from .reviewable import reviewed_by


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
    """Events whose details this user may not read yet: someone else's decision on a candidate
    still pending that the user has not reviewed. The audit log must not undo blind review;
    someone who cannot review (an approver) is not bound by it."""
    if not user.has_perm(REVIEW):
        return set()
    ids = {
        int(e.target_id)
        for e in events
        if e.verb in BLIND_VERBS
        and e.target_type == "candidate"
        and e.actor_id != user.pk
        and e.target_id.isdigit()
    }
    if not ids:
        return set()
    pending = set(
        Candidate.objects.filter(pk__in=ids, review_status=Candidate.ReviewStatus.PENDING)
        .filter(~reviewed_by(user))
        .values_list("pk", flat=True)
    )
    return {
        e.pk
        for e in events
        if e.verb in BLIND_VERBS
        and e.actor_id != user.pk
        and e.target_type == "candidate"
        and e.target_id.isdigit()
        and int(e.target_id) in pending
    }
