"""The four roles and what each may do. Groups come from a migration; their permissions are
re-synced after every migrate, so a later issue adds a permission here and nowhere else."""

from __future__ import annotations

ANNOTATOR = "annotator"
REVIEWER = "reviewer"
APPROVER = "approver"
ADMIN = "admin"
ROLES = (ANNOTATOR, REVIEWER, APPROVER, ADMIN)

_SEE_TRAJECTORIES = ["trajectories.review_trajectory"]

ROLE_PERMISSIONS: dict[str, list[str]] = {
    ANNOTATOR: _SEE_TRAJECTORIES,
    REVIEWER: _SEE_TRAJECTORIES,
    APPROVER: _SEE_TRAJECTORIES,
    ADMIN: _SEE_TRAJECTORIES + ["trajectories.add_ingestrun"],
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
