"""Agreement between reviewers on their decisions: Cohen's kappa per pair of reviewers and
Krippendorff's alpha over all, computed by `core.agreement` and worded for the review desk."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from itertools import combinations

from ..core.agreement import Statistic, Undefined, cohen_kappa, krippendorff_alpha_nominal
from ..models import Review
from .reviewable import REVIEWABLE

# The statistics' reasons in the desk's words: its items are candidates, its ratings reviews.
WORDING = {
    Undefined.NO_SHARED_ITEMS: "no candidate reviewed by both",
    Undefined.NO_PAIRABLE_UNITS: "no candidate has two or more reviews",
    Undefined.NO_VARIATION: "every review used the same decision (no variation to agree on)",
}


def _worded(statistic: Statistic) -> Statistic:
    return replace(statistic, reason=WORDING.get(statistic.reason, statistic.reason))


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    n: int
    agreed: int
    kappa: Statistic

    @property
    def percent(self) -> float | None:
        return 100 * self.agreed / self.n if self.n else None


@dataclass(frozen=True)
class Agreement:
    pairs: list[PairAgreement]
    alpha: Statistic
    units: int  # candidates with two or more independent reviews
    values: int  # reviews on those candidates
    reviews: int  # independent reviews in total
    reviewers: list[str]
    decisions: dict[str, int]


def agreement() -> Agreement:
    """Agreement on decisions (accept / reject / needs fix) of independent reviews; adjudications
    are not a rater's opinion, so they are left out."""
    rows = (
        Review.objects.filter(is_adjudication=False, candidate__status__in=REVIEWABLE)
        .order_by("candidate_id", "id")
        .values_list("candidate_id", "reviewer__username", "decision")
    )
    by_candidate: dict[int, dict[str, str]] = defaultdict(dict)
    decisions: Counter[str] = Counter()
    total = 0
    for candidate_id, reviewer, decision in rows:
        by_candidate[candidate_id][reviewer] = decision
        decisions[decision] += 1
        total += 1
    reviewers = sorted({r for rated in by_candidate.values() for r in rated})
    pairs: list[PairAgreement] = []
    for a, b in combinations(reviewers, 2):
        both = [
            (rated[a], rated[b]) for rated in by_candidate.values() if a in rated and b in rated
        ]
        agreed = sum(1 for x, y in both if x == y)
        pairs.append(PairAgreement(a, b, len(both), agreed, _worded(cohen_kappa(both))))
    alpha, units, values = krippendorff_alpha_nominal(
        list(rated.values()) for rated in by_candidate.values()
    )
    return Agreement(
        pairs=pairs,
        alpha=_worded(alpha),
        units=units,
        values=values,
        reviews=total,
        reviewers=reviewers,
        decisions={d: decisions.get(d, 0) for d in Review.Decision.values},
    )
