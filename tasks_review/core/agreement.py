"""Agreement between raters on nominal labels: Cohen's kappa for two raters, Krippendorff's alpha
for any number with missing ratings. Labels are any hashables (a review's accept / reject /
needs fix, a preference pair's A / B / tie), units any sequences of the labels given to one item.

>>> table = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
>>> round(cohen_kappa(table).value, 3)
0.4
>>> alpha, units, values = krippendorff_alpha_nominal([["A", "A"], ["A", "tie"], ["B", "B", "B"]])
>>> (round(alpha.value, 3), units, values)
(0.6, 3, 7)
>>> cohen_kappa([]).reason
<Undefined.NO_SHARED_ITEMS: 'no item rated by both'>

Written here rather than taken from PyPI: the `krippendorff` package needs numpy and
scikit-learn's cohen_kappa_score brings scikit-learn and scipy, hundreds of megabytes for two
nominal formulas of a few lines each. Both follow their authors' definitions: Cohen (1960)
κ = (p_o − p_e) / (1 − p_e); Krippendorff (2011, "Computing Krippendorff's Alpha-Reliability")
α = 1 − D_o / D_e from the coincidence matrix, nominal metric.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum


class Undefined(StrEnum):
    """Why a statistic has no value; a page words it for its own raters and items."""

    NO_SHARED_ITEMS = "no item rated by both"
    ONE_CATEGORY = "both used a single category (chance agreement is certain)"
    NO_PAIRABLE_UNITS = "no unit has two or more ratings"
    NO_VARIATION = "every rating is the same (no variation to agree on)"


@dataclass(frozen=True)
class Statistic:
    value: float | None
    reason: str = ""  # why the value is undefined, when it is None: an Undefined or its wording


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> Statistic:
    """Cohen's kappa of two raters over the items both rated, as (rater a, rater b) pairs."""
    n = len(pairs)
    if n == 0:
        return Statistic(None, Undefined.NO_SHARED_ITEMS)
    observed = sum(1 for a, b in pairs if a == b) / n
    marg_a = Counter(a for a, _ in pairs)
    marg_b = Counter(b for _, b in pairs)
    expected = sum(marg_a[c] * marg_b[c] for c in marg_a) / (n * n)
    if expected == 1:
        # Both raters used the one and the same category on every item: agreement by chance is
        # certain, so chance-corrected agreement is 0/0.
        return Statistic(None, Undefined.ONE_CATEGORY)
    return Statistic((observed - expected) / (1 - expected))


def krippendorff_alpha_nominal(units: Iterable[Sequence[Hashable]]) -> tuple[Statistic, int, int]:
    """Krippendorff's alpha (nominal) over units, each the values its raters gave (missing
    ratings simply absent). Returns the statistic, the pairable units and the pairable values."""
    coincidence: dict[tuple[Hashable, Hashable], float] = defaultdict(float)
    pairable_units = 0
    for values in units:
        m = len(values)
        if m < 2:
            continue  # a lone value pairs with nothing
        pairable_units += 1
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidence[(c, k)] += 1 / (m - 1)
    totals: dict[Hashable, float] = defaultdict(float)
    for (c, _k), weight in coincidence.items():
        totals[c] += weight
    n = sum(totals.values())
    pairable_values = round(n)
    if pairable_units == 0:
        return Statistic(None, Undefined.NO_PAIRABLE_UNITS), 0, 0
    disagree_observed = sum(w for (c, k), w in coincidence.items() if c != k)
    disagree_expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if disagree_expected == 0:
        return Statistic(None, Undefined.NO_VARIATION), pairable_units, pairable_values
    alpha = 1 - (n - 1) * disagree_observed / disagree_expected
    return Statistic(alpha), pairable_units, pairable_values
