"""One role map, granted to by each app: an app grants only its own permissions (a grant naming
another app's is refused at start-up), and migrate gives each role's group exactly its own."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ImproperlyConfigured

from groundwork.access.roles import (
    ADMIN,
    ANNOTATOR,
    APPROVER,
    REVIEWER,
    ROLES,
    grant,
    revoke,
    role_permissions,
    sync_role_permissions,
)


@pytest.fixture
def planted():
    """Whatever a test grants as the app "planted" is taken back after it."""
    yield "planted"
    revoke("planted")


def test_a_grant_naming_another_apps_permission_is_refused_at_registration(planted):
    with pytest.raises(ImproperlyConfigured, match="planted grants training.run_eval"):
        grant(planted, {REVIEWER: ["planted.do_things", "training.run_eval"]})
    assert "planted.do_things" not in role_permissions()[REVIEWER]


def test_the_apps_own_grants_cross_no_floor():
    from tasks_review.roles import GRANTS as desk
    from training.roles import GRANTS as loop
    from trajectories.roles import GRANTS as trajectories

    for app, grants in (("tasks_review", desk), ("training", loop), ("trajectories", trajectories)):
        named = {perm.partition(".")[0] for perms in grants.values() for perm in perms}
        assert named == {app}


def test_a_grant_to_something_not_a_role_is_refused(planted):
    with pytest.raises(ImproperlyConfigured, match="'owner', not a role"):
        grant(planted, {"owner": ["planted.do_things"]})


def test_each_role_holds_what_the_apps_granted_it():
    held = role_permissions()
    assert list(held) == list(ROLES)
    assert "trajectories.add_ingestrun" in held[ADMIN]
    assert "trajectories.add_ingestrun" not in held[REVIEWER]
    assert "training.approve_deployment" in held[APPROVER]
    assert held[ANNOTATOR] == [
        "trajectories.review_trajectory",
        "tasks_review.view_pipelinerun",
        "tasks_review.review_candidate",
        "training.view_training",
        "training.label_pairs",
    ]


@pytest.mark.django_db
def test_migrate_leaves_each_group_with_exactly_its_roles_permissions():
    reviewers = Group.objects.get(name=REVIEWER)
    reviewers.permissions.clear()
    sync_role_permissions()
    for role, perms in role_permissions().items():
        group = Group.objects.get(name=role)
        held = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}
        assert held == set(perms)
