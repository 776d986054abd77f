"""What the candidate page shows beside the decision: the reviews a user may see, the reference
diff (the fix) and the starting files as a tree."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from trajectories.display import MAX_DIFF_FILES, DiffView, bytes_diff, tree_nodes
from trajectories.replay_reads import blob_contents

from ..models import Candidate, Review
from .reviewable import bound_by_blind_review, complete, reviews_needed


@dataclass(frozen=True)
class ReviewerView:
    """What one user may see of a candidate's reviews. Blind review: while a candidate is pending,
    a reviewer sees nobody else's decision, not even after submitting their own."""

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
    if complete(candidate) or not bound_by_blind_review(user):
        return ReviewerView(mine, others, 0, adjudication, len(independent), reviews_needed())
    return ReviewerView(mine, [], len(others), adjudication, len(independent), reviews_needed())


def reference_changes(candidate: Candidate) -> tuple[list[DiffView], int]:
    """The fix: start_files → reference_files, as highlighted unified diffs, and how many
    changed files were left out past MAX_DIFF_FILES."""
    return files_changes(candidate.start_files or {}, candidate.reference_files or {})


def files_changes(start: Mapping[str, Any], end: Mapping[str, Any]) -> tuple[list[DiffView], int]:
    """Files (path → sha) that differ from ``start`` to ``end`` as highlighted unified diffs, and
    how many were left out past MAX_DIFF_FILES: the reference's fix here, a rollout's own
    changes on the training floor's labelling page."""
    paths = sorted(p for p in set(start) | set(end) if start.get(p) != end.get(p))
    shown, rest = paths[:MAX_DIFF_FILES], len(paths) - min(len(paths), MAX_DIFF_FILES)
    blobs = blob_contents(s for p in shown for s in (start.get(p), end.get(p)) if s)
    changes = []
    for path in shown:
        old_sha, new_sha = start.get(path), end.get(path)
        change = "added" if old_sha is None else "deleted" if new_sha is None else "modified"
        old = blobs.get(old_sha) if old_sha else b""
        new = blobs.get(new_sha) if new_sha else b""
        changes.append(bytes_diff(path, change, old, new))
    return changes, rest


@dataclass(frozen=True)
class StartTreeRow:
    """A row of the starting files' tree."""

    name: str
    path: str
    depth: int
    is_dir: bool
    change: str = ""  # the fix's change to this file (modified | deleted), "" when untouched


def start_tree(candidate: Candidate) -> list[StartTreeRow]:
    """The starting files as an indented tree, directories first; files the fix touches marked."""
    start: dict[str, Any] = candidate.start_files or {}
    ref: dict[str, Any] = candidate.reference_files or {}
    rows = []
    for node in tree_nodes(start):
        path = node.path
        change = ""
        if not node.is_dir and ref.get(path) != start[path]:
            change = "deleted" if path not in ref else "modified"
        rows.append(StartTreeRow(node.name, path, node.depth, node.is_dir, change))
    return rows
