"""The training floor's permissions, by the names its services, selectors and views check.

Which role holds which is decided in one place, `tasks_review.roles.ROLE_PERMISSIONS`.
"""

from __future__ import annotations

VIEW = "training.view_training"
EDIT_BEHAVIOUR = "training.edit_behaviour"
RUN_EVAL = "training.run_eval"
LABEL = "training.label_pairs"
DECIDE = "training.decide_behaviour"
EXPORT = "training.export_training"
PLAN = "training.plan_training"
