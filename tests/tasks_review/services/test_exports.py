"""Exporting accepted tasks as a Harbor dataset folder: task folders copied with their modes,
symlinks refused, a manifest, a status row and audit events."""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import timedelta

import pytest
from django.utils import timezone

from groundwork.access.errors import Conflict, NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import DatasetExport
from tasks_review.services import exports
from tests.tasks_review.factories import make_task_dir

pytestmark = pytest.mark.django_db


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_an_export_copies_each_accepted_task_folder_and_writes_a_manifest(
    people, tmp_path, accepted
):
    a, b = accepted
    dest = tmp_path / "out" / "dataset"
    export = exports.dataset_export_create(user=people.bob, destination=dest)
    assert export.status == DatasetExport.Status.QUEUED
    export = exports.dataset_export_execute(export_id=export.pk)
    assert export.status == DatasetExport.Status.DONE and export.error == ""
    assert export.task_count == 2 and export.finished_at is not None
    assert sorted(p.name for p in dest.iterdir()) == [
        "manifest.json",
        "repair-invoice",
        "repair-parser",
    ]
    task = dest / "repair-invoice"
    assert (task / "instruction.md").read_text().startswith("The invoice total")
    assert (task / "environment" / "Dockerfile").is_file()
    assert mode(task / "tests" / "test.sh") == 0o755
    assert mode(task / "solution" / "solve.sh") == 0o750
    assert not list((tmp_path / "out").glob(".*partial*"))

    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest == export.manifest
    assert manifest["format"] == "harbor-dataset" and manifest["export_id"] == export.pk
    assert manifest["created_by"] == "bob" and manifest["task_count"] == 2
    first = manifest["tasks"][0]
    assert first["name"] == "repair-invoice" and first["candidate_id"] == a.pk
    assert first["task_name"] == a.task_name and first["family"] == "repair"
    assert first["source_trajectory_sha256"] == a.trajectory.source.sha256
    assert first["files"] == 5
    assert [(r["reviewer"], r["decision"], r["reason"]) for r in first["reviews"]] == [
        ("alice", "accept", "good")
    ]
    assert first["trials"]["total"] == 6 and first["trials"]["passed"] == 6
    assert first["trials"]["by_role"]["oracle"] == {
        "expected": 1.0,
        "rewards": [1.0, 1.0],
        "statuses": ["graded", "graded"],
    }
    assert manifest["tasks"][1]["candidate_id"] == b.pk


def test_an_export_is_audited_when_created_and_when_finished(people, tmp_path, accepted):
    export = exports.dataset_export_create(user=people.bob, destination=tmp_path / "d")
    exports.dataset_export_execute(export_id=export.pk)
    created, finished = AuditEvent.objects.filter(target_type="dataset_export").order_by("id")
    assert (created.verb, created.actor, created.after["status"]) == (
        "dataset_export.create",
        people.bob,
        "queued",
    )
    assert (finished.verb, finished.actor) == ("dataset_export.finish", people.bob)
    assert finished.before == {"status": "running"}
    assert finished.after["status"] == "done" and finished.after["tasks"] == 2


def test_a_symlink_in_a_task_folder_fails_the_export_and_leaves_nothing(people, tmp_path, accepted):
    a, _ = accepted
    (tmp_path / "secret").write_text("host file")
    os.symlink(tmp_path / "secret", os.path.join(a.task_dir, "tests", "data"))
    dest = tmp_path / "out"
    export = exports.dataset_export_create(user=people.bob, destination=dest)
    export = exports.dataset_export_execute(export_id=export.pk)
    assert export.status == DatasetExport.Status.FAILED
    assert "symlink in task folder" in export.error and export.manifest is None
    assert not dest.exists()
    assert list(tmp_path.glob(".*partial*")) == []
    assert AuditEvent.objects.get(verb="dataset_export.finish").after["status"] == "failed"


def test_a_symlinked_task_folder_or_directory_is_refused(tmp_path):
    src = make_task_dir(tmp_path, "real")
    os.symlink(src, tmp_path / "link")
    with pytest.raises(Conflict, match="not a task folder"):
        exports.copy_task_folder(tmp_path / "link", tmp_path / "copy1")
    os.symlink(src / "tests", src / "more-tests")
    with pytest.raises(Conflict, match="symlink"):
        exports.copy_task_folder(src, tmp_path / "copy2")


def test_the_default_destination_is_a_timestamped_folder_under_var_exports(
    people, settings, tmp_path
):
    settings.VAR_DIR = tmp_path
    first = exports.dataset_export_create(user=people.bob)
    second = exports.dataset_export_create(user=people.bob)
    assert re.fullmatch(re.escape(str(tmp_path / "exports")) + r"/\d{8}-\d{6}(-\w+)?", first.path)
    assert second.path != first.path  # two exports in one second do not share a folder


def test_a_used_destination_is_refused(people, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(Conflict, match="already used"):
        exports.dataset_export_create(user=people.bob, destination=tmp_path / "full")
    exports.dataset_export_create(user=people.bob, destination=tmp_path / "new")
    with pytest.raises(Conflict, match="already used"):
        exports.dataset_export_create(user=people.bob, destination=tmp_path / "new")


def test_an_export_runs_once_however_often_the_job_is_delivered(people, tmp_path, accepted):
    export = exports.dataset_export_create(user=people.bob, destination=tmp_path / "d")
    exports.dataset_export_execute(export_id=export.pk)
    again = exports.dataset_export_execute(export_id=export.pk)
    assert again.status == DatasetExport.Status.DONE
    assert AuditEvent.objects.filter(verb="dataset_export.finish").count() == 1
    assert exports.dataset_export_execute(export_id=999_999) is None


def test_an_export_whose_worker_died_is_taken_over_and_written(people, tmp_path, accepted):
    export = exports.dataset_export_create(user=people.bob, destination=tmp_path / "d")
    long_ago = timezone.now() - timedelta(hours=1)
    # Claimed by a worker that stopped beating an hour ago: its job will never finish it.
    DatasetExport.objects.filter(pk=export.pk).update(
        status=DatasetExport.Status.RUNNING, started_at=long_ago, heartbeat_at=long_ago
    )
    done = exports.dataset_export_execute(export_id=export.pk)
    assert done.status == DatasetExport.Status.DONE and done.task_count == 2
    assert done.started_at > long_ago and done.heartbeat_at > long_ago


def test_an_export_a_live_worker_is_writing_is_left_to_it(people, tmp_path, accepted):
    export = exports.dataset_export_create(user=people.bob, destination=tmp_path / "d")
    DatasetExport.objects.filter(pk=export.pk).update(
        status=DatasetExport.Status.RUNNING,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )
    assert exports.dataset_export_execute(export_id=export.pk).status == "running"
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("who", ["alice", "carol", "eve"])
def test_only_reviewers_and_admins_export(people, who, tmp_path):
    with pytest.raises(NotPermitted):
        exports.dataset_export_create(user=getattr(people, who), destination=tmp_path / "x")
    assert not DatasetExport.objects.exists()


def test_an_export_of_a_task_written_from_a_session_with_secrets_carries_none(people, tmp_path):
    from tasks_review.core.taskfiles import SourceTrace, write_task
    from tasks_review.services import reviews
    from tests.tasks_review.core.secrets_story import SECRETS, secrets_story
    from tests.tasks_review.factories import make_candidate
    from trajectories.core.redact import still_has_secrets

    mined = secrets_story().mine()
    task = write_task(
        tmp_path / "tasks" / "repair-greet",
        mined.only,
        mined.only.instruction,
        mined.blobs,
        source_trace=SourceTrace.for_candidate("0f" * 32, mined.only),
        source_model="test-model",
        base_image="node:22-slim@sha256:" + "ab" * 32,
    )
    candidate = make_candidate(task_dir=str(task))
    reviews.review_submit(user=people.alice, candidate_id=candidate.pk, decision="accept")
    dest = tmp_path / "dataset"
    export = exports.dataset_export_create(user=people.bob, destination=dest)
    export = exports.dataset_export_execute(export_id=export.pk)
    assert export.status == DatasetExport.Status.DONE and export.task_count == 1
    copied = [p for p in (dest / "repair-greet").rglob("*") if p.is_file()]
    assert len(copied) > 20  # the whole task folder, grader kit included
    for path in copied:
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        assert still_has_secrets(text) == (), path
        assert not [s for s in SECRETS if s in text], path
