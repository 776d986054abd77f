"""Agreement between reviewers on their decisions: Cohen's kappa per pair of reviewers and
Krippendorff's alpha over all, computed by `core.agreement` and worded for the review desk."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from django.contrib.auth.models import AbstractBaseUser

from ..core.agreement import Statistic, Undefined, cohen_kappa, krippendorff_alpha_nominal
from ..models import Candidate, Review
from .reviewable import REVIEWABLE, bound_by_blind_review

# The statistics' reasons in the desk's words: its items are candidates, its ratings reviews.
WORDING = {
    Undefined.NO_SHARED_ITEMS: "no candidate reviewed by both",
    Undefined.NO_PAIRABLE_UNITS: "no candidate has two or more reviews",
    Undefined.NO_VARIATION: "every review used the same decision (no variation to agree on)",
}


def _worded(statistic: Statistic, wording: Mapping[str, str]) -> Statistic:
    return replace(statistic, reason=wording.get(statistic.reason, statistic.reason))


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
    units: int  # items (candidates) with two or more independent ratings (reviews)
    values: int  # ratings on those items
    reviews: int  # independent ratings in total
    reviewers: list[str]  # the raters
    decisions: dict[str, int]  # ratings per category


def agreement(viewer: AbstractBaseUser) -> Agreement:
    """Agreement on decisions (accept / reject / needs fix) of independent reviews; adjudications
    are not a rater's opinion, so they are left out. Whoever blind review binds sees it over
    complete candidates only: a pending one's counts would tell its decisions."""
    reviews = Review.objects.filter(is_adjudication=False, candidate__status__in=REVIEWABLE)
    if bound_by_blind_review(viewer):
        reviews = reviews.exclude(candidate__review_status=Candidate.ReviewStatus.PENDING)
    rows = reviews.order_by("candidate_id", "id").values_list(
        "candidate_id", "reviewer__username", "decision"
    )
    return agreement_over(rows, Review.Decision.values, WORDING)


def agreement_over(
    ratings: Iterable[tuple[Hashable, str, str]],
    categories: Sequence[str],
    wording: Mapping[str, str],
) -> Agreement:
    """Agreement of raters over (item, rater, label) rows, a rater's later label on an item
    replacing an earlier one; the review desk's decisions here, the training floor's preference
    labels too. ``wording`` says the undefined statistics' reasons in the caller's words."""
    by_item: dict[Hashable, dict[str, str]] = defaultdict(dict)
    counts: Counter[str] = Counter()
    total = 0
    for item, rater, label in ratings:
        by_item[item][rater] = label
        counts[label] += 1
        total += 1
    raters = sorted({r for rated in by_item.values() for r in rated})
    pairs: list[PairAgreement] = []
    for a, b in combinations(raters, 2):
        both = [(rated[a], rated[b]) for rated in by_item.values() if a in rated and b in rated]
        agreed = sum(1 for x, y in both if x == y)
        pairs.append(PairAgreement(a, b, len(both), agreed, _worded(cohen_kappa(both), wording)))
    alpha, units, values = krippendorff_alpha_nominal(
        list(rated.values()) for rated in by_item.values()
    )
    return Agreement(
        pairs=pairs,
        alpha=_worded(alpha, wording),
        units=units,
        values=values,
        reviews=total,
        reviewers=raters,
        decisions={c: counts.get(c, 0) for c in categories},
    )
