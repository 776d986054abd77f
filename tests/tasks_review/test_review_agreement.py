"""Agreement: Cohen's kappa per reviewer pair and Krippendorff's alpha, against hand-computed
examples, with the degenerate cases reported as n/a and why."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tasks_review.selectors import agreement, cohen_kappa, krippendorff_alpha_nominal
from tests.tasks_review.factories import make_candidate, make_review

A, R, N = "accept", "reject", "needs_fix"


def test_kappa_of_the_textbook_example_is_0_4():
    # 50 items: both yes 20, a yes / b no 5, a no / b yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs).value == pytest.approx(0.4)


def test_kappa_is_1_for_perfect_agreement_and_minus_1_for_perfect_disagreement():
    assert cohen_kappa([(A, A), (R, R), (N, N)]).value == pytest.approx(1.0)
    # p_o = 0, p_e = 0.5*0.5 + 0.5*0.5 = 0.5 -> (0-0.5)/0.5 = -1
    assert cohen_kappa([(A, R), (R, A)]).value == pytest.approx(-1.0)


def test_kappa_is_undefined_without_overlap_or_with_one_category():
    none = cohen_kappa([])
    assert none.value is None and none.reason == "no candidate reviewed by both"
    same = cohen_kappa([(A, A), (A, A)])
    assert same.value is None and "single category" in same.reason


def test_alpha_of_krippendorffs_own_example_is_0_743():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example:
    # 4 observers, 12 units, missing values; he reports alpha = 0.743.
    observers = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[o[u] for o in observers if o[u] is not None] for u in range(12)]
    alpha, pairable_units, values = krippendorff_alpha_nominal(units)
    assert round(alpha.value, 3) == 0.743
    assert pairable_units == 11 and values == 40  # unit 12 has a single value


def test_alpha_of_a_small_hand_computed_example():
    # Coincidences: o_aa = 2, o_ar = o_ra = 1, o_rr = 2; n_a = n_r = 3, n = 6.
    # alpha = 1 - (n-1) * sum(o_ck, c != k) / sum(n_c n_k, c != k) = 1 - 5*2/18 = 4/9
    alpha, units, values = krippendorff_alpha_nominal([[A, A], [A, R], [R, R]])
    assert alpha.value == pytest.approx(4 / 9)
    assert (units, values) == (3, 6)


def test_alpha_is_undefined_without_pairs_or_without_variation():
    alpha, units, _ = krippendorff_alpha_nominal([[A], [R]])
    assert alpha.value is None and units == 0 and "two or more reviews" in alpha.reason
    alpha, units, _ = krippendorff_alpha_nominal([[A, A], [A, A, A]])
    assert alpha.value is None and units == 2 and "same decision" in alpha.reason


@pytest.fixture
def reviewed(people):
    """c1 A/A (alice, bob); c2 R/A; c3 R/R/R (alice, bob, dave); c4 N (bob) / A (dave).
    An adjudication on c2 is not an opinion and must not count."""
    cs = [make_candidate(trials=False) for _ in range(4)]
    for c, decisions in zip(
        cs,
        [
            {"alice": A, "bob": A},
            {"alice": R, "bob": A},
            {"alice": R, "bob": R, "dave": R},
            {"bob": N, "dave": A},
        ],
        strict=True,
    ):
        for name, decision in decisions.items():
            make_review(c, getattr(people, name), decision)
    frank = User.objects.create_user("frank")
    make_review(cs[1], frank, R, is_adjudication=True)
    return cs


def test_agreement_over_the_reviews_in_the_database(reviewed):
    result = agreement()
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
    result = agreement()
    [pair] = result.pairs
    assert pair.n == 0 and pair.kappa.value is None and pair.percent is None
    assert result.alpha.value is None


def test_the_agreement_page_shows_the_numbers(client, people, reviewed):
    client.force_login(people.bob)
    html = client.get("/review/agreement/").content.decode()
    assert '<p class="stat-value">0.333</p>' in html
    assert "0.400" in html and "0.333" in html
    assert "both used a single category" in html


def test_the_agreement_page_says_why_alpha_is_n_a(client, people):
    client.force_login(people.carol)
    html = client.get("/review/agreement/").content.decode()
    assert '<p class="stat-value na">n/a</p>' in html
    assert "No candidate has two or more reviews." in html
