"""Candidate holds: a reviewer holds a candidate for a while so nobody else works it meanwhile.

The hold itself (the conditional update, one hold per person, its audit) is groundwork's
(``groundwork.services.holds``), shared with the training floor's preference pairs; this module
says who may hold which candidate (``CANDIDATES``). Every function checks the caller's role itself
and refuses with groundwork's refusals; the decisions in `reviews` take their locks and their
refusals from here.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from groundwork.access.errors import Conflict, NotPermitted
from groundwork.services import holds

from ..models import Candidate
from ..roles import ADJUDICATE, REVIEW
from ..selectors import disputes, queue, reviewable
from ..selectors.disputes import Unsettled

ReviewStatus = Candidate.ReviewStatus


def candidate_locked(candidate_id: int) -> Candidate:
    try:
        # select_for_update serialises concurrent decisions on PostgreSQL; SQLite's IMMEDIATE
        # transactions (settings) already take the write lock when the block opens. Only the
        # candidate's row: PostgreSQL refuses FOR UPDATE on the outer join to a nullable holder.
        return (
            Candidate.objects.select_for_update(of=("self",))
            .select_related("held_by")
            .get(pk=candidate_id)
        )
    except Candidate.DoesNotExist:
        raise Conflict(f"candidate {candidate_id} does not exist") from None


def refuse_unless_settler(candidate: Candidate, user: AbstractBaseUser) -> None:
    """The dispute rule (`selectors.disputes.settle_refusal`) as the error a view answers."""
    refusal = disputes.settle_refusal(candidate, user)
    if refusal is Unsettled.NOT_ADJUDICATOR:
        raise NotPermitted(f"{user.get_username() or 'anonymous'} may not adjudicate disputes")
    if refusal is Unsettled.NOT_DISPUTED:
        raise Conflict(
            f"candidate {candidate.pk} is not disputed ({candidate.get_review_status_display()})"
        )
    if refusal is Unsettled.DISPUTANT:
        raise Conflict(
            f"you reviewed candidate {candidate.pk}; another reviewer must settle the dispute"
        )


def _check_workable(candidate: Candidate, user: AbstractBaseUser) -> None:
    """May this user take this candidate to decide it (review, or adjudicate a dispute)?"""
    if not reviewable.is_reviewable(candidate):
        raise Conflict(f"candidate {candidate.pk} is {candidate.status}, not up for review")
    if candidate.review_status == ReviewStatus.PENDING:
        if candidate.reviews.filter(reviewer=user.pk, is_adjudication=False).exists():
            raise Conflict(f"you already reviewed candidate {candidate.pk}")
        return
    if candidate.review_status == ReviewStatus.DISPUTED:
        refuse_unless_settler(candidate, user)
        return
    raise Conflict(
        f"candidate {candidate.pk} is already decided ({candidate.get_review_status_display()})"
    )


# Who may hold which candidate (``holds.hold(CANDIDATES, ...)``, ``hold_next``, ``release``):
# reviewers hold the ones they may decide, next in queue order; one who adjudicates may give
# back another's.
CANDIDATES = holds.HoldPolicy(
    perm=REVIEW,
    action="review candidates",
    override_perm=ADJUDICATE,
    override_action="release another reviewer's hold",
    locked=candidate_locked,
    check_workable=_check_workable,
    open_rows=queue.workable,
)
