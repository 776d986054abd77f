"""The review desk's permissions, by the names its services, selectors and views check, and which
role holds which (``groundwork.access.roles``: every app grants its own)."""

from __future__ import annotations

from groundwork.access.roles import ADMIN, ANNOTATOR, APPROVER, REVIEWER

REVIEW = "tasks_review.review_candidate"
ADJUDICATE = "tasks_review.adjudicate_candidate"
EXPORT = "tasks_review.export_dataset"
CHANGE_SETTINGS = "tasks_review.change_desksetting"
AUDIT = "tasks_review.view_audit"
RUN_PIPELINE = "tasks_review.run_pipeline"
VIEW_RUNS = "tasks_review.view_pipelinerun"

_LEAD = [ADJUDICATE, EXPORT, AUDIT, RUN_PIPELINE]

GRANTS = {
    ANNOTATOR: [VIEW_RUNS, REVIEW],
    REVIEWER: [VIEW_RUNS, REVIEW, *_LEAD],
    APPROVER: [VIEW_RUNS, AUDIT],
    ADMIN: [VIEW_RUNS, REVIEW, *_LEAD, CHANGE_SETTINGS],
}
