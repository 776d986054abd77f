"""Dataset exports: the accepted tasks copied into a Harbor dataset folder with a manifest.

An export is a job's row (``groundwork.models.Job``): created here from the web, then written
by a worker that claims it and beats on it while it writes; a worker that dies leaves it to the
redelivery sweep. Both steps write their AuditEvent in the same transaction as the change.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from groundwork.access.errors import Conflict, require
from groundwork.jobs.heartbeat import Heartbeat
from groundwork.services.audit import audit_event_record, iso

from ..models import Candidate, DatasetExport
from ..roles import EXPORT
from ..selectors import exports, trials


def _default_destination(now: datetime) -> Path:
    return Path(settings.VAR_DIR) / "exports" / now.strftime("%Y%m%d-%H%M%S")


def dataset_export_create(
    *,
    user: AbstractBaseUser,
    destination: str | Path | None = None,
    now: datetime | None = None,
) -> DatasetExport:
    """A queued export of the accepted tasks; `tasks.dataset_export_enqueue` hands it to a
    worker, which runs dataset_export_execute."""
    require(user, EXPORT, "export datasets")
    now = now or timezone.now()
    with transaction.atomic():
        path = Path(destination) if destination else _default_destination(now)
        taken = DatasetExport.objects.filter(path=str(path)).exists()
        if destination is None and (taken or path.exists()):
            path = path.with_name(f"{path.name}-{uuid.uuid4().hex[:6]}")
        elif taken or (path.exists() and any(path.iterdir())):
            raise Conflict(f"{path} is already used; choose an empty or new folder")
        export = DatasetExport.objects.create(path=str(path), created_by=user)
        audit_event_record(
            actor=user,
            verb="dataset_export.create",
            target=export,
            before=None,
            after={"status": export.status, "path": export.path},
        )
        return export


def dataset_export_execute(*, export_id: int) -> DatasetExport | None:
    """Write the dataset folder for a queued export. A worker takes only the id; a row another
    worker has, finished or deleted is left alone, and one whose worker died is taken over (the
    folder is written beside its destination and renamed into place, so nothing half-written
    stands in the way)."""
    if not DatasetExport.claim(export_id, status=DatasetExport.Status.RUNNING):
        return DatasetExport.objects.filter(pk=export_id).first()
    export = DatasetExport.objects.select_related("created_by").get(pk=export_id)
    with Heartbeat(DatasetExport.objects.filter(pk=export_id)):
        tasks = [_export_task(c) for c in exports.exportable()]
        try:
            manifest = write_dataset(
                Path(export.path),
                tasks,
                header={
                    "export_id": export.pk,
                    "created_by": export.created_by.get_username() if export.created_by else None,
                    "created_at": iso(export.created_at),
                },
            )
        except (Conflict, OSError) as exc:
            export.status, export.error = DatasetExport.Status.FAILED, str(exc)
        else:
            export.status, export.manifest = DatasetExport.Status.DONE, manifest
            export.task_count = len(tasks)
    export.finished_at = timezone.now()
    with transaction.atomic():
        export.save(update_fields=["status", "error", "manifest", "task_count", "finished_at"])
        audit_event_record(
            actor=export.created_by,
            verb="dataset_export.finish",
            target=export,
            before={"status": DatasetExport.Status.RUNNING},
            after={
                "status": export.status,
                "path": export.path,
                "tasks": export.task_count,
                "error": export.error,
            },
        )
    return export


@dataclass(frozen=True)
class ExportTask:
    candidate_id: int
    task_dir: Path
    entry: dict[str, Any]  # the task's manifest entry, without its folder name


def _export_task(candidate: Candidate) -> ExportTask:
    reviews = [
        {
            "reviewer": r.reviewer.get_username(),
            "decision": r.decision,
            "reason": r.reason,
            "comment": r.comment,
            "is_adjudication": r.is_adjudication,
            "created_at": iso(r.created_at),
        }
        for r in candidate.reviews.select_related("reviewer").order_by("id")
    ]
    trial_runs = list(candidate.trials.defer("logs", "detail").order_by("role", "repeat", "id"))
    by_role: dict[str, dict[str, Any]] = {}
    for t in trial_runs:
        role = by_role.setdefault(t.role, {"expected": t.expected, "rewards": [], "statuses": []})
        role["rewards"].append(t.reward)
        role["statuses"].append(t.status)
    return ExportTask(
        candidate_id=candidate.pk,
        task_dir=Path(candidate.task_dir),
        entry={
            "candidate_id": candidate.pk,
            "task_name": candidate.task_name,
            "family": candidate.family,
            "language": candidate.language,
            "check_command": candidate.check_command,
            "pipeline_run_id": candidate.run_id,
            "trajectory_id": candidate.trajectory_id,
            "source_trajectory_sha256": candidate.trajectory.source.sha256,
            "reviews": reviews,
            "trials": {**trials.trial_summary(trial_runs).as_dict(), "by_role": by_role},
        },
    )


# The folder copy below is plain Python on paths: no Django, so it can move into the framework-free
# core unchanged.


def copy_task_folder(source: Path, target: Path) -> int:
    """Copy a task folder keeping file modes. A symlink or special file anywhere refuses the
    copy: a task folder is a trust boundary, and a link could pull in anything on this host."""
    if source.is_symlink() or not source.is_dir():
        raise Conflict(f"{source} is not a task folder (missing, a file, or a symlink)")
    copied = 0
    dirs: list[tuple[Path, Path]] = [(source, target)]
    target.mkdir()
    for root, dirnames, filenames in os.walk(source, followlinks=False):
        here = Path(root)
        there = target / here.relative_to(source)
        for name in sorted(dirnames):
            if (here / name).is_symlink():
                raise Conflict(f"symlink in task folder: {here / name}")
            (there / name).mkdir()
            dirs.append((here / name, there / name))
        for name in sorted(filenames):
            mode = os.lstat(here / name).st_mode
            if stat.S_ISLNK(mode):
                raise Conflict(f"symlink in task folder: {here / name}")
            if not stat.S_ISREG(mode):
                raise Conflict(f"not a regular file in task folder: {here / name}")
            shutil.copy2(here / name, there / name, follow_symlinks=False)
            copied += 1
    # Directory modes last: a read-only directory copied first would refuse its own files.
    for src, dst in reversed(dirs):
        shutil.copystat(src, dst, follow_symlinks=False)
    return copied


def _folder_name(task: ExportTask, used: set[str]) -> str:
    name = task.task_dir.name or f"candidate-{task.candidate_id}"
    if name in used:
        name = f"{name}-c{task.candidate_id}"
    used.add(name)
    return name


def write_dataset(
    destination: Path, tasks: Sequence[ExportTask], *, header: dict[str, Any]
) -> dict[str, Any]:
    """A Harbor dataset folder: one folder per task, plus manifest.json. Built beside the
    destination and renamed into place, so a failed export leaves nothing half-written."""
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise Conflict(f"{destination} exists and is not an empty folder")
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = destination.parent / f".{destination.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        used: set[str] = set()
        entries = []
        for task in tasks:
            name = _folder_name(task, used)
            files = copy_task_folder(task.task_dir, staging / name)
            entries.append({"name": name, "path": name, "files": files, **task.entry})
        manifest = {"format": "harbor-dataset", **header, "task_count": len(entries)}
        manifest["tasks"] = entries
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if destination.exists():
            destination.rmdir()
        staging.rename(destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest
