"""Replay scripts: a kept task's recorded session laid out for the replay agent.

``replay_script_write`` replays the session the task was mined from (its stored trajectory,
which the task's ``task.toml`` names by its file's hash), plans the attempt at the task
(``training.core.harbor.replay_plan``) and writes the script beside the task folder, where
``harbor run -a training.core.harbor.replay_agent:ReplayAgent --ak script=PATH`` reads it. The
agent then needs nothing from this database. The script holds the task's fix, as the task's own
``solve.sh`` does: writing one is audited.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser

from groundwork.access.errors import Invalid, NotFound, require
from groundwork.services.audit import audit_event_record
from tasks_review.models import Candidate
from tasks_review.services.taskwriting import candidate_from_payload
from training.core.harbor.replay_plan import Attempt, plan_replay, read_kept_task
from training.core.harbor.replay_script import ReplayScript, ScriptError
from trajectories.selectors import replay_inputs
from trajectories.store import DbBlobs

from ..roles import RUN_EVAL

SUFFIX = ".replay.json"


def replay_script_path(task_dir: str | Path) -> Path:
    """Where a task's script goes by default: beside its folder (inside, it would change the
    task's content digest, which links rollouts to it, and a folder of tasks stays one)."""
    folder = Path(task_dir)
    return folder.with_name(folder.name + SUFFIX)


def replay_script_write(
    *, user: AbstractBaseUser | None, candidate_id: int, out: Path | None = None
) -> tuple[Path, ReplayScript]:
    """Write the replay script of kept task ``candidate_id``; where it went, and the script."""
    if user is not None:
        require(user, RUN_EVAL, "write replay scripts")
    candidate = (
        Candidate.objects.select_related("trajectory__source").filter(pk=candidate_id).first()
    )
    if candidate is None:
        raise NotFound(f"task {candidate_id} does not exist")
    if candidate.status != Candidate.Status.KEPT or not candidate.task_dir:
        raise Invalid(f"task {candidate.pk} is not kept: only a kept task's folder can be run")
    trajectory = candidate.trajectory
    if trajectory is None:
        raise Invalid(
            f"task {candidate.pk} was authored, not mined from a recorded session: it has no "
            "recorded calls to replay"
        )
    try:
        task = read_kept_task(Path(candidate.task_dir))
        sources = {source.sha256 for source in trajectory.sources}
        if task.source_sha256 not in sources:
            raise ScriptError(
                f"its task.toml names session file {task.source_sha256[:12]}, which is not a "
                f"recording of trajectory {trajectory.pk}"
            )
        inputs = replay_inputs(trajectory)
        blobs = DbBlobs()
        script = plan_replay(
            inputs.replay(blobs),
            inputs.atif,
            attempt=Attempt.of(candidate_from_payload(candidate.payload)),
            task=task,
            blobs=blobs,
        )
    except ScriptError as exc:
        raise Invalid(f"task {candidate.pk} cannot be replayed: {exc}") from None
    path = Path(out) if out is not None else replay_script_path(candidate.task_dir)
    _write(path, script.to_json())
    audit_event_record(
        actor=user,
        verb="replay_script.write",
        target=candidate,
        before=None,
        after={"path": str(path), "actions": len(script.actions), "fix_at": script.fix_at},
    )
    return path, script


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a harbor run started meanwhile never reads half a script."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
