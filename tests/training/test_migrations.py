"""Sandbox tasks became authored tasks by renames alone: a database made before keeps its rows,
their kept tasks (family, content key, payload) and the permissions people held, both ways."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tasks_review.models import Candidate
from tasks_review.selectors.reviewable import reviewable
from tasks_review.services.reverify import stale_kept
from training.models import AuthoredTask, BehaviourTask

BEFORE = [
    ("training", "0007_behaviour_provenance_opt_ins"),
    ("tasks_review", "0015_datasetexport_job_pipelinerun_created_by"),
]
KEY = "abc123"


def migrate(targets: list[tuple[str, str]] | None = None) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    executor.loader.build_graph()
    return executor


@pytest.fixture
def before():
    """The database as it was before the rename; at the latest, back at the leaves afterwards
    (a test that fails half-way must not leave the next one an old schema to flush)."""
    try:
        yield migrate(BEFORE)
    finally:
        migrate()


def a_sandbox_task_kept_before(executor: MigrationExecutor, user) -> int:
    apps = executor.loader.project_state(BEFORE).apps
    candidate = apps.get_model("tasks_review", "Candidate").objects.create(
        family="sandbox",
        key=f"sandbox-{KEY}",
        status="kept",
        check_command="bash /tests/test.sh",
        payload={"sandbox_task": 1, "path": "/srv/task"},
    )
    behaviour = apps.get_model("training", "Behaviour").objects.create(slug="b", title="B")
    apps.get_model("training", "BehaviourTask").objects.create(
        behaviour=behaviour, candidate_id=candidate.pk, task_key=candidate.key, split="held_out"
    )
    row = apps.get_model("training", "SandboxTask").objects.create(
        path="/srv/task", task_dir="/srv/task", digest="sha256:x", name="t", status="kept"
    )
    row.candidate_id = candidate.pk
    row.save()
    user.user_permissions.add(Permission.objects.get(codename="import_sandbox_task"))
    return row.pk


@pytest.mark.django_db(transaction=True)
def test_a_database_made_before_keeps_its_authored_tasks_and_permissions(before, django_user_model):
    alice = django_user_model.objects.create_user("alice")
    pk = a_sandbox_task_kept_before(before, alice)

    migrate()

    row = AuthoredTask.objects.select_related("candidate").get(pk=pk)
    kept = row.candidate
    assert (kept.family, kept.key, kept.payload) == (
        Candidate.AUTHORED,
        f"authored-{KEY}",
        {"authored_task": 1, "path": "/srv/task"},
    )
    assert kept.authored_task == row and not kept.mined
    assert BehaviourTask.objects.get(candidate=kept).task_key == kept.key
    assert not reviewable().filter(pk=kept.pk).exists() and not stale_kept().exists()
    assert django_user_model.objects.get(pk=alice.pk).has_perm("training.import_authored_task")
    assert not Permission.objects.filter(codename__contains="sandbox").exists()


@pytest.mark.django_db(transaction=True)
def test_the_renames_go_back_as_they_came(before, django_user_model):
    alice = django_user_model.objects.create_user("alice")
    pk = a_sandbox_task_kept_before(before, alice)
    migrate()

    executor = migrate(BEFORE)

    apps = executor.loader.project_state(BEFORE).apps
    row = apps.get_model("training", "SandboxTask").objects.get(pk=pk)
    old = apps.get_model("tasks_review", "Candidate").objects.get(pk=row.candidate_id)
    assert (old.family, old.key, old.payload["sandbox_task"]) == ("sandbox", f"sandbox-{KEY}", 1)
    task_key = apps.get_model("training", "BehaviourTask").objects.get().task_key
    assert task_key == f"sandbox-{KEY}"
    assert django_user_model.objects.get(pk=alice.pk).has_perm("training.import_sandbox_task")
