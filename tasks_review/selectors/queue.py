"""The review queue: its filters, tabs and facets, and where a reviewer goes next."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, User
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from groundwork.selectors.holds import free_q, held_q
from tasks_review.selectors.reviewable import REVIEWABLE, reviewable, reviewed_by
from trajectories.models import Trajectory

from ..models import Candidate, Review

# Review buckets, each a tab on the queue. "todo" is what is left for this reviewer to do.
BUCKETS: dict[str, str] = {
    "todo": "To review",
    "pending": "All pending",
    Candidate.ReviewStatus.DISPUTED: "Disputed",
    Candidate.ReviewStatus.ACCEPTED: "Accepted",
    Candidate.ReviewStatus.REJECTED: "Rejected",
    Candidate.ReviewStatus.NEEDS_FIX: "Needs fix",
    "all": "All",
}

SORTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "id": ("Oldest first", ("id",)),
    "-id": ("Newest first", ("-id",)),
    "family": ("Family", ("family", "id")),
    "language": ("Language", ("language", "id")),
    "source": ("Source", ("trajectory__format", "id")),
    "-reviews": ("Most reviews", ("-review_count", "id")),
}


@dataclass(frozen=True)
class QueueFilters:
    family: str = ""
    status: str = ""
    language: str = ""
    source: str = ""
    reviewer: str = ""  # a username: candidates that reviewer has reviewed
    review: str = "todo"
    sort: str = "id"

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> QueueFilters:
        values = {f.name: (query.get(f.name) or "").strip()[:100] for f in fields(cls)}
        if values["review"] not in BUCKETS:
            values["review"] = "todo"
        if values["sort"] not in SORTS:
            values["sort"] = "id"
        if values["status"] not in REVIEWABLE:
            values["status"] = ""
        return cls(**values)

    @property
    def active(self) -> bool:
        """Narrowed by a filter (the review tab and the sort order are not filters)."""
        return any((self.family, self.status, self.language, self.source, self.reviewer))

    def query(self, **changes: str) -> dict[str, str]:
        """The non-default values, as a query string would carry them."""
        current = replace(self, **changes)
        default = QueueFilters()
        return {
            f.name: getattr(current, f.name)
            for f in fields(self)
            if getattr(current, f.name) != getattr(default, f.name)
        }


def _narrowed(qs: QuerySet[Candidate], filters: QueueFilters) -> QuerySet[Candidate]:
    """Every filter but the review bucket (the tabs count across buckets)."""
    if filters.family:
        qs = qs.filter(family=filters.family)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.language:
        qs = qs.filter(language=filters.language)
    if filters.source:
        qs = qs.filter(trajectory__format=filters.source)
    if filters.reviewer:
        qs = qs.filter(
            Exists(
                Review.objects.filter(
                    candidate=OuterRef("pk"),
                    reviewer__username=filters.reviewer,
                    is_adjudication=False,
                )
            )
        )
    return qs


def _bucket(qs: QuerySet[Candidate], bucket: str, user: AbstractBaseUser) -> QuerySet[Candidate]:
    if bucket == "todo":
        return qs.filter(review_status=Candidate.ReviewStatus.PENDING).filter(~reviewed_by(user))
    if bucket == "pending":
        return qs.filter(review_status=Candidate.ReviewStatus.PENDING)
    if bucket == "all":
        return qs
    return qs.filter(review_status=bucket)


def queue_search(filters: QueueFilters, user: AbstractBaseUser) -> QuerySet[Candidate]:
    qs = _bucket(_narrowed(reviewable(), filters), filters.review, user)
    # A correlated count rather than Count() over a join: SQLite then counts for the 50 rows on
    # the page, not the whole queue, and the paginator's COUNT(*) can drop the annotation.
    reviews_in = (
        Review.objects.filter(candidate=OuterRef("pk"), is_adjudication=False)
        .order_by()
        .values("candidate")
        .annotate(n=Count("id"))
        .values("n")[:1]
    )
    qs = qs.select_related("held_by").annotate(
        review_count=Coalesce(Subquery(reviews_in), 0),
        reviewed_by_me=reviewed_by(user),
        source_format=F("trajectory__format"),
        trajectory_title=F("trajectory__title"),
    )
    # The list needs a handful of columns; the JSON file maps and the instruction stay behind.
    qs = qs.defer(
        "instruction",
        "start_files",
        "reference_files",
        "changed",
        "payload",
        "drop_detail",
        "check_cwd",
    )
    return qs.order_by(*SORTS[filters.sort][1])


def queue_counts(filters: QueueFilters, user: AbstractBaseUser) -> dict[str, int]:
    """How many candidates each review tab holds under the other filters."""
    base = _narrowed(reviewable(), filters)
    by_status = dict(
        base.order_by()
        .values_list("review_status")
        .annotate(n=Count("id"))
        .values_list("review_status", "n")
    )
    counts = {key: by_status.get(key, 0) for key in Candidate.ReviewStatus.values}
    counts["pending"] = counts[Candidate.ReviewStatus.PENDING]
    counts["all"] = sum(by_status.values())
    counts["todo"] = _bucket(base, "todo", user).count()
    return counts


@dataclass(frozen=True)
class QueueFacets:
    families: list[str]
    languages: list[str]
    reviewers: list[str]
    sources: list[tuple[str, str]] = field(default_factory=lambda: list(Trajectory.Format.choices))
    statuses: list[tuple[str, str]] = field(
        default_factory=lambda: [(s.value, s.label) for s in REVIEWABLE]
    )


def queue_facets() -> QueueFacets:
    pairs = reviewable().order_by().values_list("family", "language").distinct()
    families, languages = set(), set()
    for family, language in pairs:  # one scan for both: the pairs are few
        families.add(family)
        languages.add(language)

    reviewers = (
        User.objects.filter(
            pk__in=Review.objects.filter(is_adjudication=False).values("reviewer").distinct()
        )
        .order_by("username")
        .values_list("username", flat=True)
    )
    return QueueFacets(
        sorted(f for f in families if f), sorted(x for x in languages if x), list(reviewers)
    )


def workable(
    user: AbstractBaseUser, now: datetime, filters: QueueFilters | None = None
) -> QuerySet[Candidate]:
    """Candidates this user could decide right now: pending, not yet reviewed by them, and not
    held by someone else."""
    qs = _narrowed(reviewable(), filters or QueueFilters())
    qs = _bucket(qs, "todo", user).filter(free_q(now) | Q(held_by=user.pk))
    return qs.order_by("id")


def held_by_others(
    user: AbstractBaseUser, now: datetime, filters: QueueFilters | None = None
) -> QuerySet[Candidate]:
    """Candidates this user could decide but for someone else's hold, soonest free first: what
    "Review next" names when nothing is free."""
    qs = _bucket(_narrowed(reviewable(), filters or QueueFilters()), "todo", user)
    return qs.filter(held_q(user, now)).select_related("held_by").order_by("held_until")


def neighbours(
    candidate_id: int, user: AbstractBaseUser, now: datetime, filters: QueueFilters
) -> tuple[int | None, int | None]:
    """The previous and next candidate in the filtered queue (oldest first), skipping ones held
    by another reviewer: where j and k go."""
    qs = _bucket(_narrowed(reviewable(), filters), filters.review, user)
    qs = qs.filter(free_q(now) | Q(held_by=user.pk))
    previous = qs.filter(pk__lt=candidate_id).order_by("-id").values_list("pk", flat=True).first()
    following = qs.filter(pk__gt=candidate_id).order_by("id").values_list("pk", flat=True).first()
    return previous, following
