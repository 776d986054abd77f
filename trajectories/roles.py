"""The trajectories floor's permissions, by the names its views check, and which role holds
which (``groundwork.access.roles``: every app grants its own)."""

from __future__ import annotations

from groundwork.access.roles import ADMIN, ANNOTATOR, APPROVER, REVIEWER

REVIEW_TRAJECTORY = "trajectories.review_trajectory"  # open trajectories and their replays
ADD_INGEST_RUN = "trajectories.add_ingestrun"

GRANTS = {
    ANNOTATOR: [REVIEW_TRAJECTORY],
    REVIEWER: [REVIEW_TRAJECTORY],
    APPROVER: [REVIEW_TRAJECTORY],
    ADMIN: [REVIEW_TRAJECTORY, ADD_INGEST_RUN],
}
