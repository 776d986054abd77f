"""Decisions: blind reviews with typed reasons, several reviewers agreeing or disputing, the
adjudication that settles a dispute, each audited, and only for the roles that may."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from groundwork.access.errors import Conflict, Held, Invalid, NotPermitted
from groundwork.models import AuditEvent
from groundwork.services import holds
from tasks_review.models import Candidate, Review
from tasks_review.selectors import desk
from tasks_review.services import reviews
from tasks_review.services.candidate_holds import CANDIDATES
from tests.tasks_review.factories import audit_events as events
from tests.tasks_review.factories import make_candidate

pytestmark = pytest.mark.django_db


# -- decisions -------------------------------------------------------------------------------------


def test_a_decision_is_recorded_releases_the_hold_and_is_audited(people):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk)
    review = reviews.review_submit(
        user=people.alice,
        candidate_id=c.pk,
        decision="reject",
        reason="leaks_fix",
        comment="  the instruction quotes the fix  ",
    )
    assert (review.decision, review.reason, review.comment) == (
        "reject",
        "leaks_fix",
        "the instruction quotes the fix",
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.REJECTED  # one review is enough by default
    assert c.held_by is None and c.held_until is None
    [event] = events("review.submit", c)
    assert event.actor == people.alice
    assert event.before["review_status"] == "pending" and event.before["held_by"] == "alice"
    assert event.after["decision"] == "reject" and event.after["review_status"] == "rejected"


@pytest.mark.parametrize(
    ("decision", "reason", "status"),
    [
        ("accept", "", "accepted"),
        ("reject", "duplicate", "rejected"),
        ("needs_fix", "environment_broken", "needs_fix"),
    ],
)
def test_one_review_decides_by_default(people, decision, reason, status):
    c = make_candidate()
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision=decision, reason=reason)
    c.refresh_from_db()
    assert c.review_status == status


def test_accept_without_a_reason_means_good_task(people):
    c = make_candidate()
    review = reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    assert review.reason == Review.Reason.GOOD


@pytest.mark.parametrize(
    ("decision", "reason", "comment", "message"),
    [
        ("reject", "", "", "choose a reason"),
        ("needs_fix", "good", "", "needs a problem"),
        ("accept", "leaks_fix", "", "an accept cannot"),
        ("reject", "other", "", "needs a comment"),
        ("maybe", "good", "", "unknown decision"),
        ("reject", "boring", "", "unknown reason"),
    ],
)
def test_a_decision_that_does_not_make_sense_is_refused(people, decision, reason, comment, message):
    c = make_candidate()
    with pytest.raises(Invalid, match=message):
        reviews.review_submit(
            user=people.alice, candidate_id=c.pk, decision=decision, reason=reason, comment=comment
        )
    assert not Review.objects.exists() and not AuditEvent.objects.filter(verb="review.submit")


def test_other_with_a_comment_is_fine(people):
    c = make_candidate()
    reviews.review_submit(
        user=people.alice, candidate_id=c.pk, decision="reject", reason="other", comment="license"
    )
    assert Review.objects.get().comment == "license"


def test_deciding_a_candidate_another_reviewer_holds_is_refused(people):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.bob, row_id=c.pk)
    with pytest.raises(Held):
        reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    assert not Review.objects.exists()


def test_a_reviewer_reviews_a_candidate_once(people, two_reviews):
    c = make_candidate()
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    with pytest.raises(Conflict):
        reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")


def test_a_decided_candidate_takes_no_more_reviews(people):
    c = make_candidate()
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    with pytest.raises(Conflict, match="already decided"):
        reviews.review_submit(user=people.bob, candidate_id=c.pk, decision="accept")


def test_a_candidate_not_kept_or_written_takes_no_review(people):
    c = make_candidate(status=Candidate.Status.DROPPED)
    with pytest.raises(Conflict):
        reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")


def test_two_reviews_that_agree_decide_the_candidate(people, two_reviews):
    c = make_candidate()
    reviews.review_submit(
        user=people.alice, candidate_id=c.pk, decision="needs_fix", reason="ambiguous_instruction"
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.PENDING
    reviews.review_submit(
        user=people.bob, candidate_id=c.pk, decision="needs_fix", reason="too_hard"
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.NEEDS_FIX


def test_two_reviews_that_disagree_make_a_dispute(people, two_reviews):
    c = make_candidate()
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    reviews.review_submit(
        user=people.bob, candidate_id=c.pk, decision="reject", reason="verifier_gameable"
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.DISPUTED
    assert events("review.submit", c)[-1].after["review_status"] == "disputed"


def test_review_is_blind_until_the_reviewer_has_submitted(people, two_reviews):
    c = make_candidate()
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    seen_by_bob = desk.reviews_for(c, people.bob)
    assert seen_by_bob.visible == [] and seen_by_bob.hidden_count == 1
    assert seen_by_bob.mine is None and seen_by_bob.count == 1

    reviews.review_submit(user=people.bob, candidate_id=c.pk, decision="accept")
    c.refresh_from_db()
    seen_by_bob = desk.reviews_for(c, people.bob)
    assert [r.reviewer for r in seen_by_bob.visible] == [people.alice]
    assert seen_by_bob.mine.reviewer == people.bob and seen_by_bob.hidden_count == 0
    # decided: the decision is no secret any more, even to someone who did not review
    assert len(desk.reviews_for(c, people.dave).visible) == 2


# -- adjudication ----------------------------------------------------------------------------------


@pytest.fixture
def disputed(people, two_reviews):
    c = make_candidate()
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    reviews.review_submit(user=people.dave, candidate_id=c.pk, decision="reject", reason="too_easy")
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.DISPUTED
    return c


def test_an_adjudication_settles_a_dispute_wins_and_is_audited_as_an_override(people, disputed):
    review = reviews.review_adjudicate(
        user=people.bob,
        candidate_id=disputed.pk,
        decision="reject",
        reason="too_easy",
        comment="a one-character fix",
    )
    assert review.is_adjudication
    disputed.refresh_from_db()
    assert disputed.review_status == Candidate.ReviewStatus.REJECTED
    [event] = events("review.override", disputed)
    assert event.actor == people.bob
    assert event.before["review_status"] == "disputed"
    assert {d["reviewer"]: d["decision"] for d in event.before["decisions"]} == {
        "alice": "accept",
        "dave": "reject",
    }
    assert event.after["override"] is True and event.after["overridden"] == ["alice"]
    assert event.after["review_status"] == "rejected"


def test_an_annotator_cannot_adjudicate(people, disputed):
    with pytest.raises(NotPermitted):
        reviews.review_adjudicate(user=people.alice, candidate_id=disputed.pk, decision="accept")


def test_a_disputing_reviewer_cannot_settle_their_own_dispute(people, disputed):
    with pytest.raises(Conflict, match="another reviewer"):
        reviews.review_adjudicate(user=people.dave, candidate_id=disputed.pk, decision="accept")


def test_only_a_disputed_candidate_is_adjudicated(people):
    c = make_candidate()
    with pytest.raises(Conflict, match="not disputed"):
        reviews.review_adjudicate(user=people.bob, candidate_id=c.pk, decision="accept")


def test_a_disputed_candidate_takes_no_further_review(people, disputed):
    with pytest.raises(Conflict):
        reviews.review_submit(user=people.bob, candidate_id=disputed.pk, decision="accept")


def test_an_adjudicator_holds_a_dispute_so_two_do_not_settle_it(people, disputed):
    holds.hold(CANDIDATES, user=people.bob, row_id=disputed.pk)
    other = User.objects.create_user("frank")
    other.groups.add(people.bob.groups.get())
    with pytest.raises(Held):
        reviews.review_adjudicate(user=other, candidate_id=disputed.pk, decision="accept")


# -- roles -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["carol", "eve"])
def test_people_without_the_review_role_cannot_hold_or_decide(people, who):
    user = getattr(people, who)
    c = make_candidate()
    with pytest.raises(NotPermitted):
        holds.hold(CANDIDATES, user=user, row_id=c.pk)
    with pytest.raises(NotPermitted):
        holds.hold_next(CANDIDATES, user=user)
    with pytest.raises(NotPermitted):
        reviews.review_submit(user=user, candidate_id=c.pk, decision="accept")
    with pytest.raises(NotPermitted):
        reviews.review_adjudicate(user=user, candidate_id=c.pk, decision="accept")
    # The refused decisions are on the record (a refused hold changes nothing to audit).
    assert sorted(AuditEvent.objects.values_list("verb", "actor")) == [
        ("review.override.refused", user.pk),
        ("review.submit.refused", user.pk),
    ]


def test_a_200_kb_comment_is_refused_in_words_and_nothing_is_stored(people):
    c = make_candidate()
    with pytest.raises(Invalid, match="comment is 204,800 characters long"):
        reviews.review_submit(
            user=people.alice,
            candidate_id=c.pk,
            decision="reject",
            reason="other",
            comment="c" * 204_800,
        )
    assert not Review.objects.exists()


def test_a_comment_holding_a_nul_character_is_refused_in_words(people):
    c = make_candidate()
    with pytest.raises(Invalid, match="comment holds a NUL character"):
        reviews.review_submit(
            user=people.alice,
            candidate_id=c.pk,
            decision="reject",
            reason="other",
            comment="flaky\x00",
        )
    assert not c.reviews.exists()


def test_an_unknown_decision_is_quoted_short_however_long_it_is(people):
    c = make_candidate()
    with pytest.raises(Invalid) as refused:
        reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="d" * 204_800)
    assert len(str(refused.value)) < 200 and "(204,800 characters)" in str(refused.value)
