"""Authored tasks: a user's Harbor task folder imported, verified in Docker, and kept or not.

``authored_task_import`` checks the folder (``training.core.authored``: Harbor's model and lint,
the files a trial needs, offline images when an engine is at hand), copies it into the store
by content (what is verified is what stays, whatever happens to the user's folder) and queues
the row. ``authored_task_verify`` is the job: it claims the row, runs the trial matrix on the
stored copy and records the evidence; a kept task becomes a kept ``Candidate`` (family
"authored", no run, no trajectory) and joins the behaviour it was imported for, its split
assigned then, once. Status on the row: queued -> verifying -> kept / rejected / ungraded.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from groundwork.access.errors import Conflict, Invalid, NotFound, Refused, require
from groundwork.core.docker import Engine, InfraError
from groundwork.core.failures import said
from groundwork.jobs.containers import dead_run_containers_remove
from groundwork.jobs.heartbeat import Heartbeat
from groundwork.services.audit import audit_event_record
from tasks_review.core.trials.model import MatrixStatus
from tasks_review.models import Candidate
from tasks_review.services.exports import copy_task_folder
from training.core.authored import (
    AuthoredResult,
    AuthoredSpec,
    AuthoredTaskInvalid,
    read_authored_task,
    record_solution,
    unavailable_images,
    verify_authored_task,
)
from training.core.harbor.jobs import task_digest
from trajectories.core import limits

from ..models import AuthoredTask, Behaviour
from ..roles import EDIT_BEHAVIOUR, IMPORT_AUTHORED
from .behaviours import behaviour_tasks_add

log = logging.getLogger(__name__)
S = AuthoredTask.Status
_STATUS = {
    MatrixStatus.KEPT: S.KEPT,
    MatrixStatus.REJECTED: S.REJECTED,
    MatrixStatus.UNGRADED: S.UNGRADED,
}


class TaskFolderInvalid(Invalid):
    """The folder is not an authored task; ``problems`` lists why, one line each (422)."""

    def __init__(self, folder: Path, problems: tuple[str, ...]) -> None:
        self.problems = problems
        super().__init__(f"{folder} cannot be imported as an authored task: " + "; ".join(problems))


def store_dir() -> Path:
    """Where verified task folders are kept, one per content digest."""
    configured = settings.TRAJ2ENV.get("AUTHORED_DIR")
    return Path(configured) if configured else Path(settings.VAR_DIR) / "authored"


def authored_task_import(
    *,
    user: AbstractBaseUser | None,
    path: str | Path,
    behaviour_id: int | None = None,
    engine: Engine | None = None,
) -> AuthoredTask:
    """Check the folder, store a copy and queue its verification. With ``engine``, the
    images its Dockerfile builds FROM must be in that engine too (a worker's may differ)."""
    if user is not None:
        require(user, IMPORT_AUTHORED, "import authored tasks")
        if behaviour_id is not None:
            require(user, EDIT_BEHAVIOUR, "choose a behaviour's tasks")
    problem = limits.refusal("the folder", str(path), limits.PATH)
    if problem:
        raise Invalid(problem)
    folder = Path(path).expanduser()
    try:
        spec = read_authored_task(folder)
        problems = unavailable_images(spec, engine) if engine is not None else []
    except AuthoredTaskInvalid as invalid:
        raise TaskFolderInvalid(folder, invalid.problems) from None
    except InfraError as exc:
        raise Invalid(f"the Docker engine could not be asked about the images: {exc}") from None
    if problems:
        raise TaskFolderInvalid(folder, tuple(problems))
    behaviour = _behaviour(behaviour_id)
    digest = task_digest(spec.task_dir)
    _refuse_duplicate(digest)
    stored = _store(spec, digest)
    with transaction.atomic():
        row = AuthoredTask.objects.create(
            path=str(spec.task_dir),
            task_dir=str(stored),
            digest=digest,
            name=spec.name,
            behaviour=behaviour,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        audit_event_record(
            actor=user,
            verb="authored_task.import",
            target=row,
            before=None,
            after={"path": row.path, "digest": digest, "behaviour": behaviour_id},
        )
    return row


def _behaviour(behaviour_id: int | None) -> Behaviour | None:
    if behaviour_id is None:
        return None
    behaviour = Behaviour.objects.filter(pk=behaviour_id).first()
    if behaviour is None:
        raise NotFound(f"behaviour {behaviour_id} does not exist")
    return behaviour


def _refuse_duplicate(digest: str) -> None:
    kept = Candidate.objects.filter(
        family=Candidate.AUTHORED, key=_key(digest), status=Candidate.Status.KEPT
    ).first()
    if kept is not None:
        raise Conflict(f"this folder (the same content) is kept already, as task #{kept.pk}")
    running = AuthoredTask.objects.filter(digest=digest, status__in=(S.QUEUED, S.VERIFYING))
    if running.exists():
        raise Conflict(f"this folder (the same content) is being verified: #{running[0].pk}")


def _key(digest: str) -> str:
    return "authored-" + digest.removeprefix("sha256:")[:48]


def _store(spec: AuthoredSpec, digest: str) -> Path:
    """The folder copied under the store by its content digest: the same content, under any
    folder name, is stored once (Harbor's digest leaves the folder's own name out). The copy's
    solve.sh is wrapped to leave its trajectory under Harbor (``core.authored.solution``)."""
    home = store_dir() / digest.removeprefix("sha256:")[:32]
    if (stored := _stored(home)) is not None:
        return stored
    staging = home.with_name(f".{home.name}.partial-{uuid.uuid4().hex[:8]}")
    staging.mkdir(parents=True)
    try:
        copy_task_folder(spec.task_dir, staging / spec.task_dir.name)
        # What is verified is what runs under Harbor: the solution that records itself.
        record_solution(staging / spec.task_dir.name, spec)
        try:
            staging.rename(home)
        except OSError:  # another import of the same content got there first
            if _stored(home) is None:
                raise
    except Conflict as refused:
        raise Invalid(str(refused)) from None
    except AuthoredTaskInvalid as invalid:
        raise TaskFolderInvalid(spec.task_dir, invalid.problems) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    stored = _stored(home)
    assert stored is not None  # renamed into place just now
    return stored


def _stored(home: Path) -> Path | None:
    copies = sorted(p for p in home.iterdir() if p.is_dir()) if home.is_dir() else []
    return copies[0] if copies else None


# -- the job ------------------------------------------------------------------------------------


def authored_task_verify(*, task_id: int, engine: Engine | None = None) -> AuthoredTask | None:
    """Run the trial matrix on the stored folder and record it; None when the row is gone or
    another worker holds it. A harness error leaves the row ungraded and is raised again."""
    claimed = AuthoredTask.claim(
        task_id,
        on_reclaim=lambda: dead_run_containers_remove(f"authored-{task_id}", engine=engine),
        status=S.VERIFYING,
        finished_at=None,
        reasons=[],
        evidence={},
    )
    if not claimed:
        return None
    row = AuthoredTask.objects.get(pk=task_id)
    try:
        with Heartbeat(AuthoredTask.objects.filter(pk=task_id)):
            result = verify_authored_task(row.task_dir, run_id=f"authored-{row.pk}", engine=engine)
    except Exception as exc:
        log.exception("authored task %s: the trial matrix failed", task_id)
        _finish(row, S.UNGRADED, [f"harness error: {said(exc)}"[:2000]], {})
        raise
    return _record(row, result)


def _record(row: AuthoredTask, result: AuthoredResult) -> AuthoredTask:
    status = _STATUS.get(result.status, S.UNGRADED)
    reasons = [*result.reasons, *result.problems]
    with transaction.atomic():
        candidate = _kept_candidate(row, result) if status == S.KEPT else None
        _finish(row, status, reasons, result.to_dict(), candidate=candidate)
        audit_event_record(
            actor=None,
            verb="authored_task.verify",
            target=row,
            before={"status": S.VERIFYING},
            after={
                "status": status,
                "candidate": candidate.pk if candidate else None,
                "won": list(result.won),
            },
        )
    if candidate is not None and row.behaviour_id is not None:
        # The importer's right to choose this behaviour's tasks was checked at import. The
        # verdict stands whatever happens here (a behaviour deleted meanwhile).
        try:
            behaviour_tasks_add(
                user=None, behaviour_id=row.behaviour_id, candidate_ids=[candidate.pk]
            )
        except Refused as error:
            log.warning("authored task %s kept but not added to its behaviour: %s", row.pk, error)
    row.refresh_from_db()
    return row


def _finish(
    row: AuthoredTask,
    status: str,
    reasons: list[str],
    evidence: dict[str, Any],
    *,
    candidate: Candidate | None = None,
) -> None:
    fields: dict[str, Any] = {
        "status": status,
        "reasons": reasons,
        "evidence": evidence,
        "finished_at": timezone.now(),
    }
    if candidate is not None:
        fields["candidate"] = candidate
    AuthoredTask.objects.filter(pk=row.pk).update(**fields)


def _kept_candidate(row: AuthoredTask, result: AuthoredResult) -> Candidate:
    spec = read_authored_task(row.task_dir)
    return Candidate.objects.create(
        run=None,
        trajectory=None,
        family=Candidate.AUTHORED,
        key=_key(row.digest),
        status=Candidate.Status.KEPT,
        check_command="bash /tests/test.sh",
        instruction=spec.instruction,
        task_name=spec.name,
        task_dir=row.task_dir,
        payload={"authored_task": row.pk, "path": row.path, "digest": row.digest},
        verification={
            "status": str(result.status),
            "image": result.image,
            "build_seconds": round(result.build_seconds, 3),
            "wall_seconds": round(result.wall_seconds, 3),
            "trials": len(result.trials),
        },
    )


def authored_task_retry(*, user: AbstractBaseUser, task_id: int) -> AuthoredTask:
    """Put an ungraded task back in line: Docker failed under it, so it has no verdict yet."""
    require(user, IMPORT_AUTHORED, "verify authored tasks")
    with transaction.atomic():
        row = AuthoredTask.objects.select_for_update().filter(pk=task_id).first()
        if row is None:
            raise NotFound(f"authored task {task_id} does not exist")
        # Conditional: a second click, or a worker that already took it, changes nothing.
        if not AuthoredTask.objects.filter(pk=row.pk, status=S.UNGRADED).update(status=S.QUEUED):
            raise Conflict(
                f"authored task {row.pk} is {row.status}: only ungraded ones are retried"
            )
        audit_event_record(
            actor=user,
            verb="authored_task.retry",
            target=row,
            before={"status": S.UNGRADED},
            after={"status": S.QUEUED},
        )
    row.refresh_from_db()
    return row
