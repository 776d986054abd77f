"""Review services: reservations, decisions, several reviewers, adjudication, audit and roles."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tasks_review import selectors
from tasks_review.models import AuditEvent, Candidate, Review
from tasks_review.services import review as services
from tests.tasks_review.factories import make_candidate, make_review

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_reviews(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 2}


def events(verb: str, candidate: Candidate | None = None) -> list[AuditEvent]:
    qs = AuditEvent.objects.filter(verb=verb).order_by("id")
    if candidate is not None:
        qs = qs.filter(target_type="candidate", target_id=str(candidate.pk))
    return list(qs)


# -- reservations ----------------------------------------------------------------------------------


def test_opening_reserves_for_the_configured_minutes_and_audits_it(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "RESERVATION_MINUTES": 7}
    c = make_candidate()
    now = timezone.now()
    services.candidate_reserve(user=people.alice, candidate_id=c.pk, now=now)
    c.refresh_from_db()
    assert c.reserved_by == people.alice
    assert c.reserved_until == now + timedelta(minutes=7)
    [event] = events("candidate.reserve", c)
    assert event.actor == people.alice
    assert event.before == {"reserved_by": None, "reserved_until": None}
    assert event.after["reserved_by"] == "alice"


def test_a_candidate_held_by_one_reviewer_cannot_be_reserved_by_another(people):
    c = make_candidate()
    services.candidate_reserve(user=people.alice, candidate_id=c.pk)
    with pytest.raises(services.Reserved, match="reserved by alice"):
        services.candidate_reserve(user=people.bob, candidate_id=c.pk)
    c.refresh_from_db()
    assert c.reserved_by == people.alice


def test_an_expired_reservation_is_free_for_the_next_reviewer(people):
    c = make_candidate()
    then = timezone.now() - timedelta(hours=1)
    services.candidate_reserve(user=people.alice, candidate_id=c.pk, now=then)
    services.candidate_reserve(user=people.bob, candidate_id=c.pk)
    c.refresh_from_db()
    assert c.reserved_by == people.bob
    event = events("candidate.reserve", c)[-1]
    assert event.before["reserved_by"] == "alice" and event.before["expired"] is True


def test_the_conditional_update_refuses_a_claim_that_lost_the_race(people):
    c = make_candidate()
    stale = Candidate.objects.get(pk=c.pk)  # read while still free
    Candidate.objects.filter(pk=c.pk).update(
        reserved_by=people.alice, reserved_until=timezone.now() + timedelta(minutes=5)
    )
    with pytest.raises(services.Reserved):
        services._reserve(stale, people.bob, timezone.now())
    assert Candidate.objects.get(pk=c.pk).reserved_by == people.alice


def test_reopening_ones_own_reservation_extends_it_without_a_new_audit_row(people):
    c = make_candidate()
    first = timezone.now()
    services.candidate_reserve(user=people.alice, candidate_id=c.pk, now=first)
    services.candidate_reserve(
        user=people.alice, candidate_id=c.pk, now=first + timedelta(minutes=3)
    )
    c.refresh_from_db()
    assert c.reserved_until == first + timedelta(minutes=18)
    assert len(events("candidate.reserve", c)) == 1


def test_a_reviewer_holds_one_candidate_at_a_time(people):
    first, second = make_candidate(), make_candidate()
    services.candidate_reserve(user=people.alice, candidate_id=first.pk)
    services.candidate_reserve(user=people.alice, candidate_id=second.pk)
    first.refresh_from_db()
    assert first.reserved_by is None
    [released] = events("candidate.release", first)
    assert released.after["why"] == "moved on"


def test_next_reserves_the_first_candidate_left_for_the_reviewer(people):
    make_candidate(status=Candidate.Status.PROPOSED)
    make_candidate(status=Candidate.Status.DROPPED)
    reviewed = make_candidate()
    make_review(reviewed, people.alice, "accept")
    held = make_candidate()
    services.candidate_reserve(user=people.bob, candidate_id=held.pk)
    make_candidate(review_status=Candidate.ReviewStatus.ACCEPTED)
    written = make_candidate(status=Candidate.Status.WRITTEN)

    got = services.candidate_reserve_next(user=people.alice)
    assert got.pk == written.pk
    assert Candidate.objects.get(pk=written.pk).reserved_by == people.alice


def test_next_resumes_the_candidate_already_held(people):
    make_candidate()
    second = make_candidate()
    services.candidate_reserve(user=people.alice, candidate_id=second.pk)
    assert services.candidate_reserve_next(user=people.alice).pk == second.pk


def test_next_after_a_candidate_goes_forward_and_wraps_round(people):
    a, b, c = make_candidate(), make_candidate(), make_candidate()
    assert services.candidate_reserve_next(user=people.alice, after=a.pk).pk == b.pk
    assert services.candidate_reserve_next(user=people.alice, after=c.pk).pk == a.pk


def test_next_honours_the_queue_filters(people):
    make_candidate(language="python")
    go = make_candidate(language="go")
    filters = selectors.QueueFilters(language="go")
    assert services.candidate_reserve_next(user=people.alice, filters=filters).pk == go.pk


def test_next_finds_nothing_when_all_is_reviewed_or_held(people):
    c = make_candidate()
    services.candidate_reserve(user=people.bob, candidate_id=c.pk)
    assert services.candidate_reserve_next(user=people.alice) is None


def test_the_holder_releases_and_a_reviewer_may_override_a_colleagues_hold(people):
    c = make_candidate()
    services.candidate_reserve(user=people.alice, candidate_id=c.pk)
    with pytest.raises(services.NotPermitted):
        services.candidate_release(user=people.eve, candidate_id=c.pk)
    services.candidate_release(user=people.bob, candidate_id=c.pk)  # bob adjudicates
    c.refresh_from_db()
    assert c.reserved_by is None
    [event] = events("candidate.release", c)
    assert event.actor == people.bob and event.after["override"] is True
    assert event.before["reserved_by"] == "alice"


def test_an_annotator_cannot_release_someone_elses_hold(people):
    c = make_candidate()
    services.candidate_reserve(user=people.bob, candidate_id=c.pk)
    with pytest.raises(services.NotPermitted):
        services.candidate_release(user=people.alice, candidate_id=c.pk)


def test_releasing_a_free_candidate_is_refused(people):
    c = make_candidate()
    with pytest.raises(services.NotReserved):
        services.candidate_release(user=people.alice, candidate_id=c.pk)


def test_a_candidate_not_kept_or_written_cannot_be_reserved(people):
    c = make_candidate(status=Candidate.Status.PROPOSED)
    with pytest.raises(services.NotReviewable, match="not up for review"):
        services.candidate_reserve(user=people.alice, candidate_id=c.pk)


# -- decisions -------------------------------------------------------------------------------------


def test_a_decision_is_recorded_releases_the_hold_and_is_audited(people):
    c = make_candidate()
    services.candidate_reserve(user=people.alice, candidate_id=c.pk)
    review = services.review_submit(
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
    assert c.reserved_by is None and c.reserved_until is None
    [event] = events("review.submit", c)
    assert event.actor == people.alice
    assert event.before["review_status"] == "pending" and event.before["reserved_by"] == "alice"
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
    services.review_submit(user=people.alice, candidate_id=c.pk, decision=decision, reason=reason)
    c.refresh_from_db()
    assert c.review_status == status


def test_accept_without_a_reason_means_good_task(people):
    c = make_candidate()
    review = services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
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
    with pytest.raises(services.InvalidDecision, match=message):
        services.review_submit(
            user=people.alice, candidate_id=c.pk, decision=decision, reason=reason, comment=comment
        )
    assert not Review.objects.exists() and not AuditEvent.objects.filter(verb="review.submit")


def test_other_with_a_comment_is_fine(people):
    c = make_candidate()
    services.review_submit(
        user=people.alice, candidate_id=c.pk, decision="reject", reason="other", comment="license"
    )
    assert Review.objects.get().comment == "license"


def test_deciding_a_candidate_another_reviewer_holds_is_refused(people):
    c = make_candidate()
    services.candidate_reserve(user=people.bob, candidate_id=c.pk)
    with pytest.raises(services.Reserved):
        services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    assert not Review.objects.exists()


def test_a_reviewer_reviews_a_candidate_once(people, two_reviews):
    c = make_candidate()
    services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    with pytest.raises(services.AlreadyReviewed):
        services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")


def test_a_decided_candidate_takes_no_more_reviews(people):
    c = make_candidate()
    services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    with pytest.raises(services.NotReviewable, match="already decided"):
        services.review_submit(user=people.bob, candidate_id=c.pk, decision="accept")


def test_a_candidate_not_kept_or_written_takes_no_review(people):
    c = make_candidate(status=Candidate.Status.DROPPED)
    with pytest.raises(services.NotReviewable):
        services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")


def test_two_reviews_that_agree_decide_the_candidate(people, two_reviews):
    c = make_candidate()
    services.review_submit(
        user=people.alice, candidate_id=c.pk, decision="needs_fix", reason="ambiguous_instruction"
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.PENDING
    services.review_submit(
        user=people.bob, candidate_id=c.pk, decision="needs_fix", reason="too_hard"
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.NEEDS_FIX


def test_two_reviews_that_disagree_make_a_dispute(people, two_reviews):
    c = make_candidate()
    services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    services.review_submit(
        user=people.bob, candidate_id=c.pk, decision="reject", reason="verifier_gameable"
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.DISPUTED
    assert events("review.submit", c)[-1].after["review_status"] == "disputed"


def test_review_is_blind_until_the_reviewer_has_submitted(people, two_reviews):
    c = make_candidate()
    services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    seen_by_bob = selectors.reviews_for(c, people.bob)
    assert seen_by_bob.visible == [] and seen_by_bob.hidden_count == 1
    assert seen_by_bob.mine is None and seen_by_bob.count == 1

    services.review_submit(user=people.bob, candidate_id=c.pk, decision="accept")
    c.refresh_from_db()
    seen_by_bob = selectors.reviews_for(c, people.bob)
    assert [r.reviewer for r in seen_by_bob.visible] == [people.alice]
    assert seen_by_bob.mine.reviewer == people.bob and seen_by_bob.hidden_count == 0
    # decided: the decision is no secret any more, even to someone who did not review
    assert len(selectors.reviews_for(c, people.dave).visible) == 2


# -- adjudication ----------------------------------------------------------------------------------


@pytest.fixture
def disputed(people, two_reviews):
    c = make_candidate()
    services.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    services.review_submit(
        user=people.dave, candidate_id=c.pk, decision="reject", reason="too_easy"
    )
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.DISPUTED
    return c


def test_an_adjudication_settles_a_dispute_wins_and_is_audited_as_an_override(people, disputed):
    review = services.review_adjudicate(
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
    with pytest.raises(services.NotPermitted):
        services.review_adjudicate(user=people.alice, candidate_id=disputed.pk, decision="accept")


def test_a_disputing_reviewer_cannot_settle_their_own_dispute(people, disputed):
    with pytest.raises(services.NotReviewable, match="another reviewer"):
        services.review_adjudicate(user=people.dave, candidate_id=disputed.pk, decision="accept")


def test_only_a_disputed_candidate_is_adjudicated(people):
    c = make_candidate()
    with pytest.raises(services.NotReviewable, match="not disputed"):
        services.review_adjudicate(user=people.bob, candidate_id=c.pk, decision="accept")


def test_a_disputed_candidate_takes_no_further_review(people, disputed):
    with pytest.raises(services.NotReviewable):
        services.review_submit(user=people.bob, candidate_id=disputed.pk, decision="accept")


def test_an_adjudicator_reserves_a_dispute_so_two_do_not_settle_it(people, disputed):
    services.candidate_reserve(user=people.bob, candidate_id=disputed.pk)
    other = User.objects.create_user("frank")
    other.groups.add(people.bob.groups.get())
    with pytest.raises(services.Reserved):
        services.review_adjudicate(user=other, candidate_id=disputed.pk, decision="accept")


# -- roles -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["carol", "eve"])
def test_people_without_the_review_role_cannot_reserve_or_decide(people, who):
    user = getattr(people, who)
    c = make_candidate()
    with pytest.raises(services.NotPermitted):
        services.candidate_reserve(user=user, candidate_id=c.pk)
    with pytest.raises(services.NotPermitted):
        services.candidate_reserve_next(user=user)
    with pytest.raises(services.NotPermitted):
        services.review_submit(user=user, candidate_id=c.pk, decision="accept")
    with pytest.raises(services.NotPermitted):
        services.review_adjudicate(user=user, candidate_id=c.pk, decision="accept")
    assert not AuditEvent.objects.exists()


def test_a_refusal_is_a_permission_denied_django_answers_with_403(people):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        services.candidate_reserve_next(user=people.eve)


def test_next_skips_a_candidate_decided_after_the_queue_was_read(people, monkeypatch):
    decided = make_candidate(review_status=Candidate.ReviewStatus.ACCEPTED)
    pending = make_candidate()
    # The queue as read a moment earlier, when `decided` was still pending.
    monkeypatch.setattr(
        selectors, "workable", lambda user, now, filters=None: Candidate.objects.order_by("id")
    )
    assert services.candidate_reserve_next(user=people.alice).pk == pending.pk
    decided.refresh_from_db()
    assert decided.reserved_by is None
