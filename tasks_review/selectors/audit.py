"""What blind review keeps hidden in the audit log (searched by ``groundwork.selectors.audit``)."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser

from groundwork.models import AuditEvent

from ..models import Candidate
from .reviewable import bound_by_blind_review

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
