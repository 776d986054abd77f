"""Agreement statistics against known values: Cohen's kappa on a textbook example, Krippendorff's
alpha on his own worked nominal example, and the degenerate cases reported as undefined with why.
Labels are any hashables, so the same functions serve review decisions and preference labels."""

from __future__ import annotations

import pytest

from tasks_review.core.agreement import Undefined, cohen_kappa, krippendorff_alpha_nominal

A, R, N = "accept", "reject", "needs_fix"


def test_kappa_of_the_textbook_example_is_0_4():
    # 50 items: both yes 20, a yes / b no 5, a no / b yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs).value == pytest.approx(0.4)


def test_kappa_tells_apart_two_tables_with_the_same_observed_agreement():
    # Two 100-item tables with p_o = 0.6 (the classic illustration, as in Wikipedia's "Cohen's
    # kappa"): rows rater a yes/no, columns rater b yes/no.
    # [[45, 15], [25, 15]]: p_e = 0.6*0.7 + 0.4*0.3 = 0.54 -> kappa = 0.06/0.46 = 0.1304
    # [[25, 35], [5, 35]]:  p_e = 0.6*0.3 + 0.4*0.7 = 0.46 -> kappa = 0.14/0.54 = 0.2593
    def table(yy: int, yn: int, ny: int, nn: int) -> list[tuple[str, str]]:
        return [("y", "y")] * yy + [("y", "n")] * yn + [("n", "y")] * ny + [("n", "n")] * nn

    assert round(cohen_kappa(table(45, 15, 25, 15)).value, 4) == 0.1304
    assert round(cohen_kappa(table(25, 35, 5, 35)).value, 4) == 0.2593


def test_kappa_is_1_for_perfect_agreement_and_minus_1_for_perfect_disagreement():
    assert cohen_kappa([(A, A), (R, R), (N, N)]).value == pytest.approx(1.0)
    # p_o = 0, p_e = 0.5*0.5 + 0.5*0.5 = 0.5 -> (0-0.5)/0.5 = -1
    assert cohen_kappa([(A, R), (R, A)]).value == pytest.approx(-1.0)


def test_kappa_is_undefined_without_overlap_or_with_one_category():
    none = cohen_kappa([])
    assert none.value is None and none.reason is Undefined.NO_SHARED_ITEMS
    same = cohen_kappa([(A, A), (A, A)])
    assert same.value is None and same.reason is Undefined.ONE_CATEGORY
    assert "single category" in same.reason


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
    assert alpha.value is None and units == 0 and alpha.reason is Undefined.NO_PAIRABLE_UNITS
    alpha, units, _ = krippendorff_alpha_nominal([[A, A], [A, A, A]])
    assert alpha.value is None and units == 2 and alpha.reason is Undefined.NO_VARIATION


def test_labels_are_any_hashables_and_only_their_identity_counts():
    # Krippendorff's example again, relabelled as preference labels and as tuples: any
    # one-to-one renaming of the values leaves alpha and kappa as they were.
    units = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [1, 2, 1, 2], [2, 1, 1]]
    names = {1: "A", 2: "B", 3: "tie"}
    shapes = {1: ("left",), 2: ("right",), 3: ("tie", 0)}
    expected, *_ = krippendorff_alpha_nominal(units)
    for rename in (names, shapes):
        renamed, *_ = krippendorff_alpha_nominal([[rename[v] for v in u] for u in units])
        assert renamed.value == pytest.approx(expected.value)
    pairs = [(u[0], u[1]) for u in units]
    assert cohen_kappa([(names[a], names[b]) for a, b in pairs]).value == pytest.approx(
        cohen_kappa(pairs).value
    )
