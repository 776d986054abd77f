"""Training exports: a job that writes one kind of training data for a behaviour's latest
version, or records why the policy refused it.

``training.core.exports.write_export`` checks everything before it writes a byte: an included
rollout the eval harness has not scored, a held-out task, a secret that survived redaction, or
nothing to export are refusals (status ``refused``, the reason on the row); a request that
contradicts itself is bad input (status ``failed``). RFT exports get the kept tasks' folders
copied beside their rows, as the Harbor dataset TRL's integration reads.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from groundwork.access.errors import Conflict, Invalid, NotFound, require
from groundwork.core.failures import said
from groundwork.jobs.heartbeat import Heartbeat
from groundwork.services.audit import audit_event_record
from training.core.exports import BadExportInput, ExportRefused, task_dir_name, write_export
from trajectories.core.limits import echo

from ..models import Behaviour, TrainingExport
from ..roles import EXPORT
from ..selectors.exports import export_request

log = logging.getLogger(__name__)
Status = TrainingExport.Status


def _out_dir(given: str | Path | None, behaviour: Behaviour, kind: str) -> Path:
    if given:
        folder = Path(given).expanduser().resolve()
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise Invalid(f"{folder} is not an empty folder; choose an empty or new one")
        busy = TrainingExport.objects.filter(
            out_dir=str(folder), status__in=(Status.QUEUED, Status.RUNNING)
        )
        if busy.exists():
            raise Conflict(f"another export is writing into {folder}")
        return folder
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S-%f")
    return Path(settings.VAR_DIR) / "training-exports" / f"{behaviour.slug}-{kind}-{stamp}"


def training_export_create(
    *,
    user: AbstractBaseUser | None,
    behaviour_id: int,
    kind: str,
    out_dir: str | Path | None = None,
    task_ids: Iterable[int] = (),
) -> TrainingExport:
    """A queued export of the behaviour's latest version: of the tasks named, or by default of
    every task in its train split."""
    if user is not None:
        require(user, EXPORT, "write training exports")
    if kind not in TrainingExport.Kind.values:
        raise Invalid(f"unknown export kind {echo(kind)}: choose {', '.join(TrainingExport.Kind)}")
    behaviour = Behaviour.objects.filter(pk=behaviour_id).first()
    if behaviour is None:
        raise NotFound(f"behaviour {behaviour_id} does not exist")
    version = behaviour.latest_version()
    if version is None:
        raise Invalid(f"behaviour {behaviour.slug} has no spec version to export")
    chosen = sorted(set(task_ids))
    known = set(behaviour.tasks.filter(pk__in=chosen).values_list("pk", flat=True))
    if set(chosen) - known:
        missing = ", ".join(str(t) for t in chosen if t not in known)
        raise Invalid(f"task {missing} is not one of {behaviour.slug}'s tasks")
    folder = _out_dir(out_dir, behaviour, kind)
    with transaction.atomic():
        export = TrainingExport.objects.create(
            behaviour=behaviour,
            version=version,
            kind=kind,
            task_ids=chosen,
            out_dir=str(folder),
            created_by=user if user is not None and user.is_authenticated else None,
        )
        audit_event_record(
            actor=user,
            verb="training_export.create",
            target=export,
            before=None,
            after={
                "behaviour": behaviour.slug,
                "version": version.number,
                "kind": kind,
                "tasks": chosen or "train split",
                "out_dir": export.out_dir,
            },
        )
    return export


def training_export_again(*, user: AbstractBaseUser, export_id: int) -> TrainingExport:
    """A queued export asking what ``export_id`` asked (its behaviour's latest version, its kind,
    its tasks) as the rows are now: how a stale export is replaced. Written to a new folder; the
    old one stays as it was, for whatever already read it."""
    require(user, EXPORT, "write training exports")
    old = TrainingExport.objects.filter(pk=export_id).first()
    if old is None:
        raise NotFound(f"training export {export_id} does not exist")
    return training_export_create(
        user=user, behaviour_id=old.behaviour_id, kind=old.kind, task_ids=old.task_ids or ()
    )


def training_export_execute(*, export_id: int) -> TrainingExport | None:
    """Write the export, or record its refusal; None when the row was not claimable."""
    if not TrainingExport.claim(export_id, status=Status.RUNNING):
        return None
    export = TrainingExport.objects.select_related("behaviour", "version").get(pk=export_id)
    out = Path(export.out_dir)
    fields: dict[str, object] = {}
    try:
        with Heartbeat(TrainingExport.objects.filter(pk=export_id)):
            request = export_request(export)
            result = write_export(request, out)
            for task in request.tasks:
                target = out / "tasks" / task_dir_name(task.task_id)
                shutil.copytree(task.path, target, symlinks=True)
    except ExportRefused as refused:
        fields = {"status": Status.REFUSED, "refusal_code": refused.code, "refusal": refused.reason}
    except (BadExportInput, OSError) as error:
        fields = {"status": Status.FAILED, "error": said(error)}
    except Exception as error:
        log.exception("training export %s failed", export_id)
        _finish(export, {"status": Status.FAILED, "error": said(error)})
        raise
    else:
        fields = {
            "status": Status.DONE,
            "manifest": result.manifest,
            "sha256": result.sha256,
            "rows": result.rows,
        }
    return _finish(export, fields)


def _finish(export: TrainingExport, fields: dict[str, object]) -> TrainingExport:
    with transaction.atomic():
        TrainingExport.objects.filter(pk=export.pk).update(finished_at=timezone.now(), **fields)
        export.refresh_from_db()
        audit_event_record(
            actor=export.created_by,
            verb="training_export.finish",
            target=export,
            before={"status": Status.RUNNING},
            after={
                "status": export.status,
                "rows": export.rows,
                "sha256": export.sha256 or None,
                "refusal": export.refusal or None,
                "error": export.error or None,
            },
        )
    return export
