"""Desk settings: an admin changes how many reviews a candidate needs in the app, without a
restart; the environment variable is the default until then; each change is audited and counts
at once, settling the candidates that already have the reviews a lower number asks for."""

from __future__ import annotations

import pytest

from groundwork.access.errors import Invalid, NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import Candidate, DeskSetting
from tasks_review.selectors import desk_settings, reviewable
from tasks_review.services import reviews
from tasks_review.services.desk_settings import desk_setting_change, reviews_per_candidate_set
from tests.tasks_review.factories import audit_events as events
from tests.tasks_review.factories import make_candidate

pytestmark = pytest.mark.django_db

REVIEWS = DeskSetting.Key.REVIEWS_PER_CANDIDATE


def test_without_a_row_the_environment_variable_stands(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 3}
    assert reviewable.reviews_needed() == 3
    [shown] = [s for s in desk_settings.shown() if s.key == REVIEWS]
    assert (shown.value, shown.default, shown.changed_by) == (3, 3, None)


def test_an_admin_sets_reviews_per_candidate_and_the_next_review_counts_it(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 1}
    c = make_candidate()
    reviews_per_candidate_set(user=people.dave, value=2)
    assert reviewable.reviews_needed() == 2
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    c.refresh_from_db()
    assert c.review_status == Candidate.ReviewStatus.PENDING  # one of two, no restart
    [event] = AuditEvent.objects.filter(verb="desk_setting.change")
    assert event.actor == people.dave
    assert event.before == {"key": REVIEWS, "value": 1, "source": "environment"}
    assert event.after == {"key": REVIEWS, "value": 2, "source": "set in the app"}


def test_lowering_it_settles_the_candidates_that_have_enough_reviews(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 2}
    agreed, split, waiting = make_candidate(), make_candidate(), make_candidate()
    for c in (agreed, split):
        reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    reviews.review_submit(
        user=people.bob, candidate_id=split.pk, decision="reject", reason="duplicate"
    )
    reviews_per_candidate_set(user=people.dave, value=1)
    agreed.refresh_from_db(), split.refresh_from_db(), waiting.refresh_from_db()
    assert agreed.review_status == Candidate.ReviewStatus.ACCEPTED
    assert split.review_status == Candidate.ReviewStatus.DISPUTED  # two reviews were in already
    assert waiting.review_status == Candidate.ReviewStatus.PENDING
    [settled] = events("review.settle", agreed)
    assert settled.after == {"review_status": "accepted", "reviews": 1, "reviews_needed": 1}


def test_only_an_admin_changes_a_setting(people):
    with pytest.raises(NotPermitted, match="bob may not change the desk's settings"):
        reviews_per_candidate_set(user=people.bob, value=2)
    assert not DeskSetting.objects.exists()


@pytest.mark.parametrize("value", [0, -1, 11, "two", "", None])
def test_a_value_out_of_range_is_refused_in_words(people, value):
    with pytest.raises(Invalid, match="a whole number from 1 to 10"):
        desk_setting_change(user=people.dave, key=REVIEWS, value=value)
    assert not AuditEvent.objects.exists()


def test_an_unknown_setting_is_refused(people):
    with pytest.raises(Invalid, match="no setting"):
        desk_setting_change(user=people.dave, key="DEBUG", value=1)
