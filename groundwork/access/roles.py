"""The four roles, and what each may do: every app grants its own permissions to them.

    grant("training", {REVIEWER: ["training.run_eval"], ADMIN: ["training.run_eval"]})

An app calls ``grant`` from its ``AppConfig.ready`` with the permissions it declares (its
``roles.py``: the names its services and views check). A grant naming another app's permission is
refused then, at start-up: no app names another's permissions, so adding one touches one app.
Groups come from a migration; their permissions are set again after every migrate
(``sync_role_permissions``, once every app's permissions exist).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.core.exceptions import ImproperlyConfigured

ANNOTATOR = "annotator"
REVIEWER = "reviewer"
APPROVER = "approver"
ADMIN = "admin"
ROLES = (ANNOTATOR, REVIEWER, APPROVER, ADMIN)

# app label -> role -> the app's permissions ("app_label.codename") that role holds
_GRANTS: dict[str, dict[str, tuple[str, ...]]] = {}


def grant(app_label: str, grants: Mapping[str, Iterable[str]]) -> None:
    """Give each role these permissions of ``app_label`` (replacing what the app granted before).

    >>> grant("desk", {REVIEWER: ["desk.review"], ADMIN: ["desk.review", "desk.change"]})
    >>> role_permissions()[ADMIN][-2:]
    ['desk.review', 'desk.change']
    >>> grant("desk", {ADMIN: ["training.run_eval"]})
    Traceback (most recent call last):
    ...
    django.core.exceptions.ImproperlyConfigured: desk grants training.run_eval, a permission \
of another app: an app grants only its own
    >>> revoke("desk")
    """
    checked: dict[str, tuple[str, ...]] = {}
    for role, perms in grants.items():
        if role not in ROLES:
            raise ImproperlyConfigured(f"{app_label} grants to {role!r}, not a role: {ROLES}")
        for perm in perms:
            if perm.partition(".")[0] != app_label or "." not in perm:
                raise ImproperlyConfigured(
                    f"{app_label} grants {perm}, a permission of another app: "
                    "an app grants only its own"
                )
        checked[role] = tuple(perms)
    _GRANTS[app_label] = checked


def revoke(app_label: str) -> None:
    """Take back everything ``app_label`` granted (for tests that grant their own)."""
    _GRANTS.pop(app_label, None)


def role_permissions() -> dict[str, list[str]]:
    """Each role's permissions, over every app that granted some, in the order they granted."""
    held: dict[str, list[str]] = {role: [] for role in ROLES}
    for grants in _GRANTS.values():
        for role, perms in grants.items():
            held[role] += [perm for perm in perms if perm not in held[role]]
    return held


def sync_role_permissions(**_: object) -> None:
    """Give each role's group exactly its permissions (a permission not created yet is skipped)."""
    from django.contrib.auth.models import Group, Permission

    for role, perms in role_permissions().items():
        group, _created = Group.objects.get_or_create(name=role)
        wanted = []
        for dotted in perms:
            app_label, codename = dotted.split(".", 1)
            perm = Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            ).first()
            if perm is not None:
                wanted.append(perm)
        group.permissions.set(wanted)
