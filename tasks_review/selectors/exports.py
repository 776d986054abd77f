"""What a dataset export takes."""

from __future__ import annotations

from django.db.models import QuerySet

from ..models import Candidate
from .reviewable import reviewable


def exportable() -> QuerySet[Candidate]:
    """Accepted candidates whose task folder was written."""
    return (
        reviewable()
        .filter(review_status=Candidate.ReviewStatus.ACCEPTED)
        .exclude(task_dir="")
        .select_related("trajectory__source")
        .order_by("id")
    )
