"""The audit trail moved to groundwork, and holds got their name, as changes of state: no SQL,
the same tables and rows."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from groundwork.models import AuditEvent

STATE_ONLY = [
    ("groundwork", "0001_initial"),
    ("tasks_review", "0013_auditevent_to_groundwork"),
    ("tasks_review", "0014_candidate_held_by_held_until"),
    ("training", "0005_preferencepair_held_by_held_until"),
]
BEFORE = [("tasks_review", "0012_desksetting_reviews_and_labels_per_item"), ("groundwork", None)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("migration", STATE_ONLY)
@pytest.mark.parametrize("backwards", [False, True])
def test_the_moves_and_renames_run_no_sql_either_way(migration, backwards):
    out = io.StringIO()
    args = ["--backwards"] if backwards else []
    call_command("sqlmigrate", *migration, *args, stdout=out)
    statements = [
        line
        for line in out.getvalue().splitlines()
        if line.strip() and not line.startswith("--") and line not in ("BEGIN;", "COMMIT;")
    ]
    assert statements == []


@pytest.mark.django_db(transaction=True)
def test_a_database_made_before_the_move_keeps_its_audit_rows_and_writes_more(django_user_model):
    alice = django_user_model.objects.create_user("alice")
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    # The desk's own model, as the database had it before the move.
    executor.loader.build_graph()
    old = executor.loader.project_state(BEFORE[:1]).apps.get_model("tasks_review", "AuditEvent")
    for i in range(3):
        old.objects.create(actor_id=alice.pk, verb=f"candidate.{i}", target_type="c", target_id=i)
    ids = sorted(old.objects.values_list("pk", flat=True))

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert sorted(AuditEvent.objects.values_list("pk", flat=True)) == ids
    assert AuditEvent._meta.db_table == "tasks_review_auditevent"
    newer = AuditEvent.objects.create(actor=alice, verb="candidate.3", target_type="c", target_id=3)
    assert newer.pk > ids[-1]
