"""Candidate holds: a reviewer holds a candidate for a while, one at a time; expired holds are free;
the race for a free candidate is won once; an adjudicator may release a colleague's hold."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from django.utils import timezone

from groundwork.access.errors import Conflict, Held, NotHeld, NotPermitted
from groundwork.services import holds
from tasks_review.models import Candidate
from tasks_review.selectors import queue
from tasks_review.services.candidate_holds import CANDIDATES
from tests.tasks_review.factories import audit_events as events
from tests.tasks_review.factories import make_candidate, make_review

pytestmark = pytest.mark.django_db


# -- holds --------------------------------------------------------------------------------------


def test_opening_holds_for_the_configured_seconds_and_audits_it(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "HOLD_SECONDS": 45}
    c = make_candidate()
    now = timezone.now()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk, now=now)
    c.refresh_from_db()
    assert c.held_by == people.alice
    assert c.held_until == now + timedelta(seconds=45)
    [event] = events("candidate.hold", c)
    assert event.actor == people.alice
    assert event.before == {"held_by": None, "held_until": None}
    assert event.after["held_by"] == "alice"


def test_a_candidate_held_by_one_reviewer_cannot_be_held_by_another(people):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk)
    with pytest.raises(Held, match="held by alice"):
        holds.hold(CANDIDATES, user=people.bob, row_id=c.pk)
    c.refresh_from_db()
    assert c.held_by == people.alice


def test_an_expired_hold_is_free_for_the_next_reviewer(people):
    c = make_candidate()
    then = timezone.now() - timedelta(hours=1)
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk, now=then)
    holds.hold(CANDIDATES, user=people.bob, row_id=c.pk)
    c.refresh_from_db()
    assert c.held_by == people.bob
    event = events("candidate.hold", c)[-1]
    assert event.before["held_by"] == "alice" and event.before["expired"] is True


def test_the_conditional_update_refuses_a_claim_that_lost_the_race(people):
    c = make_candidate()
    stale = Candidate.objects.get(pk=c.pk)  # read while still free
    Candidate.objects.filter(pk=c.pk).update(
        held_by=people.alice, held_until=timezone.now() + timedelta(minutes=5)
    )
    with pytest.raises(Held):
        holds._take(stale, people.bob, timezone.now(), seconds=60)
    assert Candidate.objects.get(pk=c.pk).held_by == people.alice


def test_an_opened_candidate_is_held_briefly_so_an_abandoned_tab_frees_it_soon(people):
    """Auto-advance opens the next candidate for a reviewer; nobody renewing it (a closed or
    hidden tab) must not lock teammates out for long."""
    c = make_candidate()
    now = timezone.now()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk, now=now)
    c.refresh_from_db()
    assert c.held_until <= now + timedelta(minutes=2)
    later = now + timedelta(minutes=2, seconds=1)
    holds.hold(CANDIDATES, user=people.bob, row_id=c.pk, now=later)
    assert Candidate.objects.get(pk=c.pk).held_by == people.bob


def test_renewing_ones_own_hold_extends_it_without_a_new_audit_row(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "HOLD_SECONDS": 120}
    c = make_candidate()
    first = timezone.now()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk, now=first)
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk, now=first + timedelta(seconds=30))
    c.refresh_from_db()
    assert c.held_until == first + timedelta(seconds=150)
    assert len(events("candidate.hold", c)) == 1


def test_a_reviewer_holds_one_candidate_at_a_time(people):
    first, second = make_candidate(), make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=first.pk)
    holds.hold(CANDIDATES, user=people.alice, row_id=second.pk)
    first.refresh_from_db()
    assert first.held_by is None
    [released] = events("candidate.release", first)
    assert released.after["why"] == "moved on"


def test_next_holds_the_first_candidate_left_for_the_reviewer(people):
    make_candidate(status=Candidate.Status.PROPOSED)
    make_candidate(status=Candidate.Status.DROPPED)
    reviewed = make_candidate()
    make_review(reviewed, people.alice, "accept")
    held = make_candidate()
    holds.hold(CANDIDATES, user=people.bob, row_id=held.pk)
    make_candidate(review_status=Candidate.ReviewStatus.ACCEPTED)
    written = make_candidate(status=Candidate.Status.WRITTEN)

    got = holds.hold_next(CANDIDATES, user=people.alice)
    assert got.pk == written.pk
    assert Candidate.objects.get(pk=written.pk).held_by == people.alice


def test_next_resumes_the_candidate_already_held(people):
    make_candidate()
    second = make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=second.pk)
    assert holds.hold_next(CANDIDATES, user=people.alice).pk == second.pk


def test_next_after_a_candidate_goes_forward_and_wraps_round(people):
    a, b, c = make_candidate(), make_candidate(), make_candidate()
    assert holds.hold_next(CANDIDATES, user=people.alice, after=a.pk).pk == b.pk
    assert holds.hold_next(CANDIDATES, user=people.alice, after=c.pk).pk == a.pk


def test_next_honours_the_queue_filters(people):
    make_candidate(language="python")
    go = make_candidate(language="go")
    filters = queue.QueueFilters(language="go")
    assert holds.hold_next(CANDIDATES, user=people.alice, scope=filters).pk == go.pk


def test_next_finds_nothing_when_all_is_reviewed_or_held(people):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.bob, row_id=c.pk)
    assert holds.hold_next(CANDIDATES, user=people.alice) is None


def test_the_holder_releases_and_a_reviewer_may_override_a_colleagues_hold(people):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk)
    with pytest.raises(NotPermitted):
        holds.release(CANDIDATES, user=people.eve, row_id=c.pk)
    holds.release(CANDIDATES, user=people.bob, row_id=c.pk)  # bob adjudicates
    c.refresh_from_db()
    assert c.held_by is None
    [event] = events("candidate.release", c)
    assert event.actor == people.bob and event.after["override"] is True
    assert event.before["held_by"] == "alice"


def test_an_annotator_cannot_release_someone_elses_hold(people):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.bob, row_id=c.pk)
    with pytest.raises(NotPermitted):
        holds.release(CANDIDATES, user=people.alice, row_id=c.pk)


def test_releasing_a_free_candidate_is_refused(people):
    c = make_candidate()
    with pytest.raises(NotHeld):
        holds.release(CANDIDATES, user=people.alice, row_id=c.pk)


def test_a_candidate_not_kept_or_written_cannot_be_held(people):
    c = make_candidate(status=Candidate.Status.PROPOSED)
    with pytest.raises(Conflict, match="not up for review"):
        holds.hold(CANDIDATES, user=people.alice, row_id=c.pk)


def test_a_refusal_is_a_permission_denied_django_answers_with_403(people):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        holds.hold_next(CANDIDATES, user=people.eve)


def test_next_skips_a_candidate_decided_after_the_queue_was_read(people):
    decided = make_candidate(review_status=Candidate.ReviewStatus.ACCEPTED)
    pending = make_candidate()
    # The queue as read a moment earlier, when `decided` was still pending.
    stale = dataclasses.replace(
        CANDIDATES, open_rows=lambda user, now, scope: Candidate.objects.order_by("id")
    )
    assert holds.hold_next(stale, user=people.alice).pk == pending.pk
    decided.refresh_from_db()
    assert decided.held_by is None
