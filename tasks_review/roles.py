"""The four roles and what each may do. Groups come from a migration; their permissions are
re-synced after every migrate, so a later issue adds a permission here and nowhere else."""

from __future__ import annotations

ANNOTATOR = "annotator"
REVIEWER = "reviewer"
APPROVER = "approver"
ADMIN = "admin"
ROLES = (ANNOTATOR, REVIEWER, APPROVER, ADMIN)

_SEE = ["trajectories.review_trajectory", "tasks_review.view_pipelinerun"]
_REVIEW = ["tasks_review.review_candidate"]
_LEAD = [
    "tasks_review.adjudicate_candidate",
    "tasks_review.export_dataset",
    "tasks_review.view_audit",
    "tasks_review.run_pipeline",
]

# The training floor's (training/roles.py names them for its checks). Deployments: reviewers and
# admins register adapters and propose; approvers approve (the service also refuses the
# registrar and the proposer); all three operate (a kill needs no approval); admins hold the API
# clients serving infrastructure uses.
_SEE_TRAINING = ["training.view_training"]
_TRAIN = ["training.edit_behaviour", "training.run_eval", "training.import_sandbox_task"]
_LABEL = ["training.label_pairs"]
_LOOP = ["training.decide_behaviour", "training.export_training", "training.plan_training"]
_PROPOSE = ["training.register_adapter", "training.propose_deployment"]
_OPERATE = ["training.operate_deployment"]

ROLE_PERMISSIONS: dict[str, list[str]] = {
    ANNOTATOR: _SEE + _REVIEW + _SEE_TRAINING + _LABEL,
    REVIEWER: (
        _SEE + _REVIEW + _LEAD + _SEE_TRAINING + _TRAIN + _LABEL + _LOOP + _PROPOSE + _OPERATE
    ),
    APPROVER: (
        _SEE
        + ["tasks_review.view_audit"]
        + _SEE_TRAINING
        + ["training.approve_deployment"]
        + _OPERATE
    ),
    ADMIN: (
        _SEE
        + _REVIEW
        + _LEAD
        + ["trajectories.add_ingestrun"]
        + _SEE_TRAINING
        + _TRAIN
        + _LABEL
        + _LOOP
        + _PROPOSE
        + _OPERATE
        + ["training.manage_api_clients", "tasks_review.change_desksetting"]
    ),
}


def sync_role_permissions(**_: object) -> None:
    from django.contrib.auth.models import Group, Permission

    for role, perms in ROLE_PERMISSIONS.items():
        group, _created = Group.objects.get_or_create(name=role)
        wanted = []
        for dotted in perms:
            app_label, codename = dotted.split(".", 1)
            perm = Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            ).first()
            if perm is None:  # the app's permissions are created later in the same post_migrate
                continue
            wanted.append(perm)
        group.permissions.set(wanted)


# The review desk's permissions, by the names its services, selectors and views check.
REVIEW = "tasks_review.review_candidate"
ADJUDICATE = "tasks_review.adjudicate_candidate"
EXPORT = "tasks_review.export_dataset"
CHANGE_SETTINGS = "tasks_review.change_desksetting"
AUDIT = "tasks_review.view_audit"
RUN_PIPELINE = "tasks_review.run_pipeline"
