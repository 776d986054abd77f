"""Agreement between reviewers from the reviews in the database: kappa per pair, alpha over
all, adjudications left out, and the undefined cases worded for the desk."""

from __future__ import annotations

import pytest

from tasks_review.selectors.reviewer_agreement import agreement
from tests.tasks_review.factories import make_candidate, make_review

pytestmark = pytest.mark.django_db

A, R, N = "accept", "reject", "needs_fix"


def test_agreement_over_the_reviews_in_the_database(people, reviewed):
    result = agreement(people.bob)
    pairs = {(p.a, p.b): p for p in result.pairs}
    # alice/bob: (A,A) (R,A) (R,R): p_o = 2/3, p_e = (1*2 + 2*1)/9 = 4/9 -> kappa = 2/5
    assert pairs["alice", "bob"].n == 3 and pairs["alice", "bob"].agreed == 2
    assert pairs["alice", "bob"].kappa.value == pytest.approx(0.4)
    # alice/dave: only c3, both reject: a single category, so n/a
    assert pairs["alice", "dave"].kappa.value is None
    assert "single category" in pairs["alice", "dave"].kappa.reason
    # bob/dave: (R,R) (N,A): p_o = 1/2, p_e = 1/4 -> kappa = 1/3
    assert pairs["bob", "dave"].kappa.value == pytest.approx(1 / 3)
    # alpha: n_A = 4, n_R = 4, n_N = 1, n = 9; disagreeing coincidences 4;
    # sum n_c n_k (c != k) = 2*(16 + 4 + 4) = 48 -> alpha = 1 - 8*4/48 = 1/3
    assert result.alpha.value == pytest.approx(1 / 3)
    assert (result.units, result.values, result.reviews) == (4, 9, 9)
    assert result.reviewers == ["alice", "bob", "dave"]  # frank only adjudicated
    assert result.decisions == {"accept": 4, "reject": 4, "needs_fix": 1}


def test_a_pair_without_a_shared_candidate_is_listed_as_n_a(people):
    make_review(make_candidate(trials=False), people.alice, A)
    make_review(make_candidate(trials=False), people.bob, R)
    result = agreement(people.carol)
    [pair] = result.pairs
    assert pair.n == 0 and pair.kappa.value is None and pair.percent is None
    assert pair.kappa.reason == "no candidate reviewed by both"
    assert result.alpha.value is None
    assert result.alpha.reason == "no candidate has two or more reviews"


def test_reviews_that_all_agree_leave_alpha_undefined_in_the_desks_words(people):
    for _ in range(2):
        c = make_candidate(trials=False)
        make_review(c, people.alice, A)
        make_review(c, people.bob, A)
    result = agreement(people.carol)
    assert result.alpha.value is None and result.units == 2
    assert result.alpha.reason == "every review used the same decision (no variation to agree on)"
    [pair] = result.pairs
    assert pair.kappa.reason == "both used a single category (chance agreement is certain)"


def test_a_pending_candidates_reviews_count_only_for_those_blind_review_does_not_bind(
    people, reviewed
):
    pending = make_candidate(trials=False)  # two of its three reviews in
    make_review(pending, people.alice, R)
    make_review(pending, people.dave, R)
    for reviewer in (people.bob, people.alice, people.dave):  # whoever may review, reviewed or not
        bound = agreement(reviewer)
        assert (bound.units, bound.reviews) == (4, 9)
        assert bound.decisions == {"accept": 4, "reject": 4, "needs_fix": 1}
    approver = agreement(people.carol)  # who cannot review is not bound
    assert (approver.units, approver.reviews) == (5, 11)
    assert approver.decisions["reject"] == 6
