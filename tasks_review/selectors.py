"""Reads for the review desk: the queue and its filters, what a reviewer may see of a candidate,
the reference diff, disputes, the audit log, and agreement between reviewers."""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from itertools import combinations
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, User
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from trajectories.models import Blob, Trajectory

from .models import AuditEvent, Candidate, Review, TrialRun

# Only candidates the pipeline wrote or kept (verified) are worth a human's time.
REVIEWABLE = (Candidate.Status.KEPT, Candidate.Status.WRITTEN)


def reviews_needed() -> int:
    return int(settings.TRAJ2ENV["REVIEWS_PER_CANDIDATE"])


def reservation_minutes() -> int:
    return int(settings.TRAJ2ENV["RESERVATION_MINUTES"])


def reviewable() -> QuerySet[Candidate]:
    return Candidate.objects.filter(status__in=REVIEWABLE)


def free_q(now: datetime) -> Q:
    """Nobody holds the candidate: never reserved, released, or the reservation ran out."""
    return Q(reserved_until__isnull=True) | Q(reserved_until__lte=now)


def held_by_other(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> bool:
    return (
        candidate.reserved_by_id is not None
        and candidate.reserved_by_id != user.pk
        and candidate.reserved_until is not None
        and candidate.reserved_until > now
    )


def held_by(candidate: Candidate, user: AbstractBaseUser, now: datetime) -> bool:
    return (
        candidate.reserved_by_id == user.pk
        and candidate.reserved_until is not None
        and candidate.reserved_until > now
    )


def _reviewed_by(user: AbstractBaseUser) -> Exists:
    return Exists(
        Review.objects.filter(candidate=OuterRef("pk"), reviewer=user.pk, is_adjudication=False)
    )


# -- the queue -------------------------------------------------------------------------------------

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
        return qs.filter(review_status=Candidate.ReviewStatus.PENDING).filter(~_reviewed_by(user))
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
    qs = qs.select_related("reserved_by").annotate(
        review_count=Coalesce(Subquery(reviews_in), 0),
        reviewed_by_me=_reviewed_by(user),
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
    qs = _bucket(qs, "todo", user).filter(free_q(now) | Q(reserved_by=user.pk))
    return qs.order_by("id")


def neighbours(
    candidate_id: int, user: AbstractBaseUser, now: datetime, filters: QueueFilters
) -> tuple[int | None, int | None]:
    """The previous and next candidate in the filtered queue (oldest first), skipping ones held
    by another reviewer: where j and k go."""
    qs = _bucket(_narrowed(reviewable(), filters), filters.review, user)
    qs = qs.filter(free_q(now) | Q(reserved_by=user.pk))
    previous = qs.filter(pk__lt=candidate_id).order_by("-id").values_list("pk", flat=True).first()
    following = qs.filter(pk__gt=candidate_id).order_by("id").values_list("pk", flat=True).first()
    return previous, following


# -- one candidate ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewerView:
    """What one user may see of a candidate's reviews. Blind review: while a candidate is pending,
    a reviewer sees the others' decisions only after submitting their own."""

    mine: Review | None
    visible: list[Review]
    hidden_count: int
    adjudication: Review | None
    count: int  # independent reviews in
    needed: int


def reviews_for(candidate: Candidate, user: AbstractBaseUser) -> ReviewerView:
    reviews = list(candidate.reviews.select_related("reviewer").order_by("id"))
    independent = [r for r in reviews if not r.is_adjudication]
    adjudication = next((r for r in reviews if r.is_adjudication), None)
    mine = next((r for r in independent if r.reviewer_id == user.pk), None)
    others = [r for r in independent if r.reviewer_id != user.pk]
    settled = candidate.review_status != Candidate.ReviewStatus.PENDING
    if mine is not None or settled:
        return ReviewerView(mine, others, 0, adjudication, len(independent), reviews_needed())
    return ReviewerView(None, [], len(others), adjudication, len(independent), reviews_needed())


def trials_for(candidate: Candidate) -> list[TrialRun]:
    """Oracle first, then the no-op, then the controls by name; repeats in order."""
    trials = list(candidate.trials.defer("logs", "detail").order_by("role", "repeat", "id"))
    rank = {"oracle": 0, "noop": 1}
    return sorted(trials, key=lambda t: (rank.get(t.role, 2), t.role, t.repeat, t.pk))


@dataclass(frozen=True)
class TrialRow:
    trial: TrialRun
    verdict: str  # pass | fail | ungraded | skipped | waiting
    seconds: float | None


def trial_rows(trials: Sequence[TrialRun]) -> list[TrialRow]:
    rows = []
    for t in trials:
        if t.status == TrialRun.Status.UNGRADED:
            verdict = "ungraded"
        elif t.status == TrialRun.Status.SKIPPED:
            verdict = "skipped"
        elif t.status == TrialRun.Status.GRADED:
            verdict = "pass" if t.passed else "fail"
        else:
            verdict = "waiting"
        seconds = t.duration_ms / 1000 if t.duration_ms is not None else None
        rows.append(TrialRow(t, verdict, seconds))
    return rows


@dataclass(frozen=True)
class TrialSummary:
    total: int
    graded: int
    passed: int
    failed: int
    ungraded: int
    waiting: int
    skipped: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def trial_summary(trials: Sequence[TrialRun]) -> TrialSummary:
    graded = [t for t in trials if t.status == TrialRun.Status.GRADED]
    passed = sum(1 for t in graded if t.passed)
    skipped = sum(1 for t in trials if t.status == TrialRun.Status.SKIPPED)
    return TrialSummary(
        total=len(trials) - skipped,
        skipped=skipped,
        graded=len(graded),
        passed=passed,
        failed=len(graded) - passed,
        ungraded=sum(1 for t in trials if t.status == TrialRun.Status.UNGRADED),
        waiting=sum(
            1 for t in trials if t.status in (TrialRun.Status.QUEUED, TrialRun.Status.RUNNING)
        ),
    )


MAX_DIFF_FILES = 30
MAX_DIFF_BYTES = 512 * 1024
MAX_DIFF_LINES = 3000


@dataclass(frozen=True)
class FileChange:
    path: str
    change: str  # added | modified | deleted
    diff: str = ""  # unified diff text without the ---/+++ header
    note: str = ""
    added: int = 0
    removed: int = 0


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def blob_contents(shas: Iterable[str]) -> dict[str, bytes]:
    wanted = {s for s in shas if s}
    return {b.sha256: b.content() for b in Blob.objects.filter(sha256__in=wanted)}


def reference_changes(candidate: Candidate) -> tuple[list[FileChange], int]:
    """The fix: start_files → reference_files, as unified diffs (difflib), and how many changed
    files were left out past MAX_DIFF_FILES."""
    start: dict[str, Any] = candidate.start_files or {}
    ref: dict[str, Any] = candidate.reference_files or {}
    paths = sorted(p for p in set(start) | set(ref) if start.get(p) != ref.get(p))
    shown, rest = paths[:MAX_DIFF_FILES], len(paths) - min(len(paths), MAX_DIFF_FILES)
    blobs = blob_contents(s for p in shown for s in (start.get(p), ref.get(p)) if s)
    return [_file_change(p, start.get(p), ref.get(p), blobs) for p in shown], rest


def _file_change(
    path: str, old_sha: str | None, new_sha: str | None, blobs: dict[str, bytes]
) -> FileChange:
    change = "added" if old_sha is None else "deleted" if new_sha is None else "modified"
    old = blobs.get(old_sha, None) if old_sha else b""
    new = blobs.get(new_sha, None) if new_sha else b""
    if old is None or new is None:
        return FileChange(path, change, note="The stored content is missing from the blob store.")
    if max(len(old), len(new)) > MAX_DIFF_BYTES:
        return FileChange(path, change, note=f"Too large to diff ({len(old)} → {len(new)} bytes).")
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        return FileChange(path, change, note=f"Binary file ({len(old)} → {len(new)} bytes).")
    lines = list(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile="/dev/null" if change == "added" else f"a/{path}",
            tofile="/dev/null" if change == "deleted" else f"b/{path}",
        )
    )[2:]
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in lines[:MAX_DIFF_LINES]
    )
    if len(lines) > MAX_DIFF_LINES:
        text += f"… {len(lines) - MAX_DIFF_LINES} more diff lines not shown\n"
    return FileChange(
        path,
        change,
        diff=text,
        added=sum(1 for x in lines if x.startswith("+")),
        removed=sum(1 for x in lines if x.startswith("-")),
    )


@dataclass(frozen=True)
class TreeRow:
    name: str
    path: str
    depth: int
    is_dir: bool
    change: str = ""  # the fix's change to this file (modified | deleted), "" when untouched


def start_tree(candidate: Candidate) -> list[TreeRow]:
    """The starting files as an indented tree, directories first; files the fix touches marked."""
    start: dict[str, Any] = candidate.start_files or {}
    ref: dict[str, Any] = candidate.reference_files or {}

    def key(path: str) -> tuple[tuple[int, str], ...]:
        *dirs, name = path.split("/")
        return (*((0, d.lower()) for d in dirs), (1, name.lower()))

    rows: list[TreeRow] = []
    open_dirs: list[str] = []
    for path in sorted(start, key=key):
        *dirs, name = path.split("/")
        depth = 0
        while depth < min(len(open_dirs), len(dirs)) and open_dirs[depth] == dirs[depth]:
            depth += 1
        del open_dirs[depth:]
        for d in dirs[depth:]:
            rows.append(TreeRow(d, "/".join([*open_dirs, d]), len(open_dirs), True))
            open_dirs.append(d)
        change = (
            "" if ref.get(path) == start[path] else "deleted" if path not in ref else "modified"
        )
        rows.append(TreeRow(name, path, len(dirs), False, change))
    return rows


# -- disputes --------------------------------------------------------------------------------------


def disputes() -> QuerySet[Candidate]:
    return (
        reviewable()
        .filter(review_status=Candidate.ReviewStatus.DISPUTED)
        .select_related("reserved_by")
        .defer("instruction", "start_files", "reference_files", "changed", "payload")
        .prefetch_related("reviews__reviewer")
        .order_by("id")
    )


def next_dispute(after: int, user: AbstractBaseUser, now: datetime) -> int | None:
    qs = disputes().filter(free_q(now) | Q(reserved_by=user.pk)).exclude(reviews__reviewer=user.pk)
    return (
        qs.filter(pk__gt=after).values_list("pk", flat=True).first()
        or qs.values_list("pk", flat=True).first()
    )


# -- the audit log ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditFilters:
    actor: str = ""
    verb: str = ""
    target: str = ""  # "candidate", "candidate:42", or "42"

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> AuditFilters:
        return cls(**{f.name: (query.get(f.name) or "").strip()[:100] for f in fields(cls)})

    @property
    def active(self) -> bool:
        return bool(self.actor or self.verb or self.target)


def audit_search(filters: AuditFilters) -> QuerySet[AuditEvent]:
    qs = AuditEvent.objects.select_related("actor").order_by("-id")
    if filters.actor:
        qs = qs.filter(actor__username=filters.actor)
    if filters.verb:
        qs = qs.filter(verb=filters.verb)
    if filters.target:
        kind, _, ident = filters.target.partition(":")
        if ident:
            qs = qs.filter(target_type=kind, target_id=ident)
        elif kind.isdigit():
            qs = qs.filter(target_id=kind)
        else:
            qs = qs.filter(target_type=kind)
    return qs


def audit_facets() -> dict[str, list[str]]:
    verbs = AuditEvent.objects.order_by("verb").values_list("verb", flat=True).distinct()
    actors = (
        User.objects.filter(pk__in=AuditEvent.objects.values("actor").distinct())
        .order_by("username")
        .values_list("username", flat=True)
    )
    return {"verbs": list(verbs), "actors": list(actors)}


BLIND_VERBS = ("review.submit",)


def audit_blinded(events: Sequence[AuditEvent], user: AbstractBaseUser) -> set[int]:
    """Events whose details this user may not read yet: someone else's decision on a candidate
    still pending that the user has not reviewed. The audit log must not undo blind review;
    someone who cannot review (an approver) is not bound by it."""
    if not user.has_perm("tasks_review.review_candidate"):
        return set()
    ids = {
        int(e.target_id)
        for e in events
        if e.verb in BLIND_VERBS
        and e.target_type == "candidate"
        and e.actor_id != user.pk
        and e.target_id.isdigit()
    }
    if not ids:
        return set()
    pending = set(
        Candidate.objects.filter(pk__in=ids, review_status=Candidate.ReviewStatus.PENDING)
        .filter(~_reviewed_by(user))
        .values_list("pk", flat=True)
    )
    return {
        e.pk
        for e in events
        if e.verb in BLIND_VERBS
        and e.actor_id != user.pk
        and e.target_type == "candidate"
        and e.target_id.isdigit()
        and int(e.target_id) in pending
    }


# -- export ----------------------------------------------------------------------------------------


def exportable() -> QuerySet[Candidate]:
    """Accepted candidates whose task folder was written."""
    return (
        reviewable()
        .filter(review_status=Candidate.ReviewStatus.ACCEPTED)
        .exclude(task_dir="")
        .select_related("trajectory__source")
        .order_by("id")
    )


# -- agreement -------------------------------------------------------------------------------------
#
# Written here rather than taken from PyPI: the `krippendorff` package needs numpy and
# scikit-learn's cohen_kappa_score brings scikit-learn and scipy, hundreds of megabytes for two
# nominal formulas of a few lines each. Both follow their authors' definitions:
# Cohen (1960) κ = (p_o − p_e) / (1 − p_e); Krippendorff (2011, "Computing Krippendorff's
# Alpha-Reliability") α = 1 − D_o / D_e from the coincidence matrix, nominal metric.


@dataclass(frozen=True)
class Statistic:
    value: float | None
    reason: str = ""  # why the value is undefined, when it is None


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> Statistic:
    """Cohen's kappa of two raters over the items both rated, as (rater a, rater b) pairs."""
    n = len(pairs)
    if n == 0:
        return Statistic(None, "no candidate reviewed by both")
    observed = sum(1 for a, b in pairs if a == b) / n
    marg_a = Counter(a for a, _ in pairs)
    marg_b = Counter(b for _, b in pairs)
    expected = sum(marg_a[c] * marg_b[c] for c in marg_a) / (n * n)
    if expected == 1:
        # Both raters used the one and the same category on every item: agreement by chance is
        # certain, so chance-corrected agreement is 0/0.
        return Statistic(None, "both used a single category (chance agreement is certain)")
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
        return Statistic(None, "no candidate has two or more reviews"), 0, 0
    disagree_observed = sum(w for (c, k), w in coincidence.items() if c != k)
    disagree_expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if disagree_expected == 0:
        return (
            Statistic(None, "every review used the same decision (no variation to agree on)"),
            pairable_units,
            pairable_values,
        )
    alpha = 1 - (n - 1) * disagree_observed / disagree_expected
    return Statistic(alpha), pairable_units, pairable_values


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
        pairs.append(PairAgreement(a, b, len(both), agreed, cohen_kappa(both)))
    alpha, units, values = krippendorff_alpha_nominal(
        list(rated.values()) for rated in by_candidate.values()
    )
    return Agreement(
        pairs=pairs,
        alpha=alpha,
        units=units,
        values=values,
        reviews=total,
        reviewers=reviewers,
        decisions={d: decisions.get(d, 0) for d in Review.Decision.values},
    )
