"""Who may settle a dispute: a reviewer whose role adjudicates and who did not review the
candidate. One rule, read by the services, the candidate page and the next-dispute choice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tasks_review.models import Candidate
from tasks_review.selectors.disputes import Unsettled, next_dispute, settle_refusal
from tests.tasks_review.factories import make_candidate, make_review

pytestmark = pytest.mark.django_db


def disputed_between(*reviewers) -> Candidate:
    c = make_candidate(review_status=Candidate.ReviewStatus.DISPUTED)
    for reviewer, decision in zip(reviewers, ["accept", "reject"], strict=False):
        make_review(c, reviewer, decision)
    return c


def test_an_adjudicator_who_did_not_review_may_settle(people):
    c = disputed_between(people.alice, people.dave)
    assert settle_refusal(c, people.bob) is None


def test_a_disputant_may_not_settle_even_as_an_adjudicator(people):
    c = disputed_between(people.alice, people.dave)  # dave administers, so he adjudicates
    assert settle_refusal(c, people.dave) is Unsettled.DISPUTANT


@pytest.mark.parametrize("who", ["alice", "carol", "eve"])
def test_roles_that_do_not_adjudicate_may_not_settle(people, who):
    c = disputed_between(people.bob, people.dave)
    assert settle_refusal(c, getattr(people, who)) is Unsettled.NOT_ADJUDICATOR


def test_only_a_disputed_candidate_is_settled(people):
    c = make_candidate()
    assert settle_refusal(c, people.bob) is Unsettled.NOT_DISPUTED


def test_the_next_dispute_is_one_the_user_may_settle_and_nobody_else_holds(people):
    mine = disputed_between(people.bob, people.dave)  # bob reviewed it: not his to settle
    held = disputed_between(people.alice, people.dave)
    held.held_by, held.held_until = people.carol, timezone.now() + timedelta(minutes=5)
    held.save()
    free = disputed_between(people.alice, people.dave)
    make_candidate()  # pending, not disputed
    now = timezone.now()
    assert next_dispute(mine.pk, people.bob, now) == free.pk
    assert next_dispute(free.pk, people.bob, now) == free.pk  # wraps round to the only one
    assert next_dispute(0, people.dave, now) is None  # he reviewed every one
