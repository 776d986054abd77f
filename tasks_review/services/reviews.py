"""Decisions: a reviewer's blind review of a candidate, and the adjudication that settles a
dispute between reviewers.

Every function checks the caller's role itself, refuses illegal transitions with a refusal
(``groundwork.access.errors``), and writes its AuditEvent in the same transaction as the change it
records.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from groundwork.access.errors import Conflict, Invalid
from groundwork.services.audit import audit_event_record, require_audited
from groundwork.services.holds import holding, refuse_if_held
from trajectories.core import limits
from trajectories.core.limits import echo

from ..models import Candidate, Review
from ..roles import ADJUDICATE, REVIEW
from ..selectors import reviewable
from .candidate_holds import candidate_locked, refuse_unless_settler

Decision = Review.Decision
Reason = Review.Reason
ReviewStatus = Candidate.ReviewStatus

# "Good task" is what an accept says; a reject or needs-fix must name what is wrong.
ACCEPT_REASONS = frozenset({Reason.GOOD, Reason.OTHER})
PROBLEM_REASONS = frozenset(set(Reason) - {Reason.GOOD})
OUTCOME = {
    Decision.ACCEPT: ReviewStatus.ACCEPTED,
    Decision.REJECT: ReviewStatus.REJECTED,
    Decision.NEEDS_FIX: ReviewStatus.NEEDS_FIX,
}


def _validated(decision: str, reason: str, comment: str) -> tuple[Decision, Reason]:
    try:
        chosen = Decision(decision)
    except ValueError:
        raise Invalid(f"unknown decision {echo(decision)}") from None
    if not reason and chosen == Decision.ACCEPT:
        reason = Reason.GOOD
    if not reason:
        raise Invalid(f"choose a reason (1–9) for {chosen.label.lower()}")
    try:
        why = Reason(reason)
    except ValueError:
        raise Invalid(f"unknown reason {echo(reason)}") from None
    allowed = ACCEPT_REASONS if chosen == Decision.ACCEPT else PROBLEM_REASONS
    if why not in allowed:
        if chosen == Decision.ACCEPT:
            raise Invalid(
                f"an accept cannot give the reason “{why.label}” (use Good task, or Other)"
            )
        raise Invalid(f"{chosen.label.lower()} needs a problem, not “{why.label}”")
    problem = limits.refusal("the comment", comment.strip(), limits.COMMENT)
    if problem:
        raise Invalid(problem)
    if why == Reason.OTHER and not comment.strip():
        raise Invalid("the reason Other needs a comment saying what it is")
    return chosen, why


def _review_row(review: Review) -> dict[str, Any]:
    return {
        "reviewer": review.reviewer.get_username(),
        "decision": review.decision,
        "reason": review.reason,
    }


def _status_after(decisions: list[str], needed: int) -> ReviewStatus:
    """Pending until ``needed`` reviews are in; then decided if they agree, else disputed."""
    if len(decisions) < needed:
        return ReviewStatus.PENDING
    return OUTCOME[Decision(decisions[0])] if len(set(decisions)) == 1 else ReviewStatus.DISPUTED


def _settle(candidate: Candidate, status: ReviewStatus) -> None:
    # A decision ends the decider's hold, so the next reviewer can take the candidate at once.
    Candidate.objects.filter(pk=candidate.pk).update(
        review_status=status, held_by=None, held_until=None
    )
    candidate.review_status = status


def review_submit(
    *,
    user: AbstractBaseUser,
    candidate_id: int,
    decision: str,
    reason: str = "",
    comment: str = "",
    now: datetime | None = None,
) -> Review:
    """Record one reviewer's decision. When REVIEWS_PER_CANDIDATE are in, the candidate is
    accepted, rejected or needs a fix if they all agree, and disputed if they do not."""
    require_audited(
        user,
        REVIEW,
        "review candidates",
        verb="review.submit",
        target=Candidate,
        target_id=candidate_id,
    )
    chosen, why = _validated(decision, reason, comment)
    now = now or timezone.now()
    with transaction.atomic():
        candidate = candidate_locked(candidate_id)
        if not reviewable.is_reviewable(candidate):
            raise Conflict(f"candidate {candidate.pk} is {candidate.status}, not reviewable")
        if candidate.reviews.filter(reviewer=user.pk, is_adjudication=False).exists():
            raise Conflict(f"you already reviewed candidate {candidate.pk}")
        if candidate.review_status != ReviewStatus.PENDING:
            raise Conflict(
                f"candidate {candidate.pk} is already decided "
                f"({candidate.get_review_status_display()})"
            )
        refuse_if_held(candidate, user, now)
        before = {
            "review_status": candidate.review_status,
            "reviews": candidate.reviews.filter(is_adjudication=False).count(),
            **holding(candidate, now),
        }
        review = Review.objects.create(
            candidate=candidate,
            reviewer=user,
            decision=chosen,
            reason=why,
            comment=comment.strip(),
        )
        decisions = list(
            candidate.reviews.filter(is_adjudication=False).values_list("decision", flat=True)
        )
        status = _status_after(decisions, reviewable.reviews_needed())
        _settle(candidate, status)
        audit_event_record(
            actor=user,
            verb="review.submit",
            target=candidate,
            before=before,
            after={
                "review_id": review.pk,
                "decision": chosen.value,
                "reason": why.value,
                "comment": review.comment,
                "reviews": len(decisions),
                "review_status": status.value,
                "held_by": None,
                "held_until": None,
            },
        )
        return review


def review_adjudicate(
    *,
    user: AbstractBaseUser,
    candidate_id: int,
    decision: str,
    reason: str = "",
    comment: str = "",
    now: datetime | None = None,
) -> Review:
    """Settle a disputed candidate. The adjudication wins over the reviews and is audited as an
    override of them; it must come from someone who was not one of the disputing reviewers."""
    require_audited(
        user,
        ADJUDICATE,
        "adjudicate disputes",
        verb="review.override",
        target=Candidate,
        target_id=candidate_id,
    )
    chosen, why = _validated(decision, reason, comment)
    now = now or timezone.now()
    with transaction.atomic():
        candidate = candidate_locked(candidate_id)
        refuse_unless_settler(candidate, user)
        refuse_if_held(candidate, user, now)
        reviews = list(candidate.reviews.select_related("reviewer").filter(is_adjudication=False))
        before = {
            "review_status": candidate.review_status,
            "decisions": [_review_row(r) for r in reviews],
            **holding(candidate, now),
        }
        review = Review.objects.create(
            candidate=candidate,
            reviewer=user,
            decision=chosen,
            reason=why,
            comment=comment.strip(),
            is_adjudication=True,
        )
        status = OUTCOME[chosen]
        _settle(candidate, status)
        audit_event_record(
            actor=user,
            verb="review.override",
            target=candidate,
            before=before,
            after={
                "review_id": review.pk,
                "decision": chosen.value,
                "reason": why.value,
                "comment": review.comment,
                "review_status": status.value,
                "override": True,
                "overridden": [r.reviewer.get_username() for r in reviews if r.decision != chosen],
            },
        )
        return review


def candidates_settle(*, user: AbstractBaseUser, needed: int) -> list[int]:
    """Settle the pending candidates that have ``needed`` reviews already (after an admin
    lowered the number), each audited as ``review.settle``; the caller checked the role."""
    with_reviews = (
        reviewable.reviewable()
        .filter(review_status=ReviewStatus.PENDING)
        .annotate(independent=Count("reviews", filter=Q(reviews__is_adjudication=False)))
        .filter(independent__gte=needed)
    )
    settled = []
    for pk in with_reviews.values_list("pk", flat=True):
        candidate = candidate_locked(pk)
        decisions = list(
            candidate.reviews.filter(is_adjudication=False).values_list("decision", flat=True)
        )
        status = _status_after(decisions, needed)
        if candidate.review_status != ReviewStatus.PENDING or status == ReviewStatus.PENDING:
            continue  # decided since the query ran
        _settle(candidate, status)
        audit_event_record(
            actor=user,
            verb="review.settle",
            target=candidate,
            before={"review_status": ReviewStatus.PENDING.value, "reviews": len(decisions)},
            after={
                "review_status": status.value,
                "reviews": len(decisions),
                "reviews_needed": needed,
            },
        )
        settled.append(pk)
    return settled
