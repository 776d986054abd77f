"""Rollouts: a `harbor run` jobs folder read into rows, and each re-graded from the world it left.

Reading (`rollout_import_execute`) links every trial to the kept task it ran, ingests the agent's
trajectory like any other, and stores the facts the eval harness scores (the replay, with the
final files replaced by the collected ``/app``). Grading (`rollouts_regrade`) runs the task's own
separate verifier in Docker over the collected ``/app``, once per task for all its rollouts;
Harbor's reward stays beside ours and a disagreement shows. Both are jobs: rows claimed by one
worker, progress on the row.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from groundwork.access.errors import Invalid, require
from groundwork.core.docker import Engine, InfraError
from groundwork.core.failures import said
from groundwork.jobs.containers import dead_run_containers_remove
from groundwork.jobs.heartbeat import Heartbeat
from groundwork.services.audit import audit_event_record
from tasks_review.core.trials import mined_task
from tasks_review.core.trials.taskdir import read_tree
from tasks_review.models import Candidate
from training.core.authored import authored_task
from training.core.facts import TaskContext, TrajectoryFacts, facts_of, with_world
from training.core.harbor.jobs import JobTrial, read_jobs, task_digest
from training.core.harbor.regrade import TaskGrader
from trajectories.core import formats, limits
from trajectories.core.blobs import sha256_hex
from trajectories.models import Trajectory
from trajectories.services.ingest import ingest_run_create, ingest_run_execute
from trajectories.store import DbBlobs

from ..models import Rollout, RolloutImport
from ..roles import RUN_EVAL

log = logging.getLogger(__name__)
MAX_WORLD_FILES = 5000
MAX_WORLD_BYTES = 50 << 20


def rollout_import_create(*, user: AbstractBaseUser | None, path: str | Path) -> RolloutImport:
    if user is not None:
        require(user, RUN_EVAL, "import rollouts")
    problem = limits.refusal("the folder", str(path), limits.PATH)
    if problem:
        raise Invalid(problem)
    folder = Path(path).expanduser()
    if not folder.is_dir():
        shown = limits.echo(str(folder))
        raise Invalid(f"{shown} is not a folder (give the jobs folder `harbor run -o` wrote)")
    with transaction.atomic():
        row = RolloutImport.objects.create(
            path=str(folder.resolve()), created_by=user if _known(user) else None
        )
        audit_event_record(
            actor=user, verb="rollouts.import", target=row, before=None, after={"path": row.path}
        )
    return row


def rollout_import_execute(*, import_id: int) -> RolloutImport | None:
    """Read the jobs folder into rollouts; None when the row is gone or another worker has it.

    Re-importing a folder updates its rollouts not yet evaluated and adds nothing twice; an
    evaluated rollout is never overwritten, and a trial name another folder already used
    becomes a rollout of its own, ``NAME (2)``, naming the one it repeats.
    """
    if not RolloutImport.claim(
        import_id, status=RolloutImport.Status.RUNNING, done=0, total=0, error=""
    ):
        return None
    row = RolloutImport.objects.get(pk=import_id)
    try:
        with Heartbeat(RolloutImport.objects.filter(pk=import_id)):
            trials = read_jobs(Path(row.path))
            RolloutImport.objects.filter(pk=row.pk).update(total=len(trials))
            kept = _kept_tasks()
            summary: dict[str, Any] = {"trials": len(trials), "rollouts": [], "skipped": []}
            for n, trial in enumerate(trials, start=1):
                outcome = _import_trial(row, trial, kept)
                key = "rollouts" if isinstance(outcome, int) else "skipped"
                summary[key].append(
                    outcome if isinstance(outcome, int) else {"trial": trial.trial_name, **outcome}
                )
                RolloutImport.objects.filter(pk=row.pk).update(done=n)
    except Exception as exc:
        log.exception("rollout import %s failed", import_id)
        RolloutImport.objects.filter(pk=row.pk).update(
            status=RolloutImport.Status.FAILED,
            error=said(exc)[:2000],
            finished_at=timezone.now(),
        )
        raise
    RolloutImport.objects.filter(pk=row.pk).update(
        status=RolloutImport.Status.DONE, summary=summary, finished_at=timezone.now()
    )
    row.refresh_from_db()
    return row


class _KeptTasks:
    """Kept tasks by Harbor's content digest of their folder and by task name."""

    def __init__(self, candidates: list[Candidate]) -> None:
        self.by_name = {c.task_name: c for c in candidates if c.task_name}
        self._candidates = candidates
        self._by_digest: dict[str, Candidate] | None = None

    def by_digest(self, digest: str) -> Candidate | None:
        if self._by_digest is None:  # hashing every kept folder is only worth it when asked
            self._by_digest = {}
            for candidate in self._candidates:
                folder = Path(candidate.task_dir)
                if candidate.task_dir and folder.is_dir():
                    self._by_digest[task_digest(folder)] = candidate
        return self._by_digest.get(digest)


def _kept_tasks() -> _KeptTasks:
    return _KeptTasks(list(Candidate.objects.filter(status=Candidate.Status.KEPT).order_by("id")))


def _import_trial(row: RolloutImport, trial: JobTrial, kept: _KeptTasks) -> int | dict[str, str]:
    """The rollout's id, or why the trial was passed over."""
    candidate = (kept.by_digest(trial.task_digest) if trial.task_digest else None) or (
        kept.by_name.get(trial.task_name or "")
    )
    if candidate is None:
        return {
            "reason": "unknown_task",
            "detail": f"{trial.task_name or 'no task name'}: not a kept task of this installation",
        }
    existing = Rollout.objects.filter(trial_name=trial.trial_name).first()
    name = trial.trial_name
    if existing is not None and (existing.trial_dir != str(trial.folder) or _evaluated(existing)):
        if existing.trial_dir == str(trial.folder):
            return {
                "reason": "already_evaluated",
                "detail": f"rollout {existing.pk} of this trial was evaluated: kept as it is",
            }
        # Another jobs folder reused the trial name: a rollout of its own, never an overwrite.
        name = _duplicate_name(trial.trial_name)
    trajectory, log = _ingest_agent_log(trial)
    facts = _facts(trajectory, log, trial, candidate)
    agent = trial.agent
    kwargs = agent.kwargs or {}
    problems = list(trial.problems)
    if log is not None and trajectory is None:
        problems.append(
            "its agent log is stored as another recording of a session this trial did not "
            "make: linked to no trajectory, its facts read from its own file"
        )
    detail: dict[str, Any] = {"problems": problems} if problems else {}
    if name != trial.trial_name and existing is not None:
        detail["duplicate_of"] = existing.pk
    rollout, _created = Rollout.objects.update_or_create(
        trial_name=name,
        defaults={
            "candidate": candidate,
            "trajectory": trajectory,
            "source": row,
            "trial_dir": str(trial.folder),
            "app_dir": str(trial.app_dir) if trial.app_dir else "",
            "agent": agent.name or agent.import_path or "unknown",
            "model": agent.model or "",
            "adapter": str(kwargs.get("adapter", "")),
            "served_sha256": agent.served_sha256 or "",
            "prompt_version": str(kwargs.get("prompt_version", "")),
            "harbor_reward": trial.reward,
            "reward": None,
            "grade": Rollout.Grade.PENDING,
            "grade_detail": detail,
            "facts": facts.to_dict() if facts else None,
        },
    )
    return rollout.pk


def _evaluated(rollout: Rollout) -> bool:
    return rollout.grade == Rollout.Grade.GRADED or rollout.results.exists()


def _duplicate_name(name: str) -> str:
    """``name (2)``, ``name (3)`` …: the first such name no rollout has."""
    n = 2
    while Rollout.objects.filter(trial_name=f"{name} ({n})").exists():
        n += 1
    return f"{name} ({n})"


def _ingest_agent_log(trial: JobTrial) -> tuple[Trajectory | None, Path | None]:
    """The trial's agent trajectory, ingested like any other (the same bytes twice add
    nothing), and the log it came from. Trajectories are keyed by the trial: the twin rule
    looks only inside the trial's folder, so a log repeating another trial's session id (a
    replay of one recorded session, a rerun) is a trajectory of its own, never the other
    trial's. Only a trajectory made from these bytes is the trial's."""
    for path in (*trial.trajectories, *trial.sessions):
        run = ingest_run_create(paths=[path])
        summary = ingest_run_execute(run_id=run.pk, twins_under=trial.folder)
        ids = (summary.trajectory_ids + summary.duplicate_ids) if summary else []
        if not ids:
            continue
        trajectory = Trajectory.objects.select_related("source").get(pk=ids[0])
        try:
            own = trajectory.source.sha256 == sha256_hex(formats.read_bytes(path))
        except formats.IngestError:
            own = False
        return (trajectory if own else None), path
    return None, None


def _own_log(path: Path) -> formats.Loaded | None:
    try:
        loaded = formats.load(path)
    except formats.IngestError:
        return None
    return loaded if isinstance(loaded, formats.Loaded) else None


def _facts(
    trajectory: Trajectory | None, log: Path | None, trial: JobTrial, candidate: Candidate
) -> TrajectoryFacts | None:
    """What the harness scores: the replay of what the agent did, in the world it left behind."""
    blobs = DbBlobs()
    context = TaskContext(
        test_files=tuple((candidate.payload or {}).get("test_paths") or ()),
        network_allowed=False,  # kept tasks run with no network
        test_shas=_test_shas(candidate),
    )
    if trajectory is not None:
        atif = json.loads(trajectory.atif.content())
        side = json.loads(trajectory.side_data.content()) if trajectory.side_data else {}
        facts = facts_of(atif, side, root=trajectory.cwd or None, blobs=blobs, context=context)
    elif log is not None and (loaded := _own_log(log)) is not None:
        facts = facts_of(
            loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs, context=context
        )
    else:
        # An agent that left no log (Harbor's nop): nothing it did can earn an action.
        facts = TrajectoryFacts(
            root="/app", agent=None, n_steps=0, actions=(), final_files={}, context=context
        )
    world = _world(trial.app_dir)
    if world is not None:
        facts = with_world(facts, world, blobs)
    blobs.flush()
    return facts


def _test_shas(candidate: Candidate) -> dict[str, tuple[str, ...]]:
    """The task's test files the agent's world starts with, and the contents each may hold at
    the end (the start's, or the reference's where the fix changed it): a mined task's only
    (a build task's hidden tests are not in the world)."""
    start, reference = candidate.start_files or {}, candidate.reference_files or {}
    return {
        path: tuple(dict.fromkeys(s for s in (start[path], reference.get(path)) if s))
        for path in (candidate.payload or {}).get("test_paths") or ()
        if path in start
    }


def _world(app_dir: Path | None) -> dict[str, bytes] | None:
    """The collected project's source files, as the grader takes them; None when there is none
    or it is too big to stand for the world (file evidence then stays unknown)."""
    if app_dir is None or not app_dir.is_dir():
        return None
    files = read_tree(app_dir)
    if len(files) > MAX_WORLD_FILES or sum(len(e.data) for e in files.values()) > MAX_WORLD_BYTES:
        return None
    return {path: entry.data for path, entry in files.items()}


def _claim_grading(candidate_id: int, rollout_ids: list[int]) -> list[int]:
    """Take pending rollouts (or ones a dead worker left grading: silent for a few beats); the
    ids this worker holds. Grading is Docker work: a grading row that never beat is judged by
    the docker queue's time limit."""
    G = Rollout.Grade
    return [
        rollout_id
        for rollout_id in rollout_ids
        if Rollout.claim(
            rollout_id,
            # One task's gradings share its label: only what dead processes left goes.
            on_reclaim=lambda: dead_run_containers_remove(
                _run_id(candidate_id), include_live=False
            ),
            grade=G.GRADING,
        )
    ]


def _run_id(candidate_id: int) -> str:
    return f"regrade-{candidate_id}"


def rollouts_pending_by_task(rollout_ids: list[int] | None = None) -> dict[int, list[int]]:
    """Rollouts waiting for a grader, grouped by kept task: one grading job each, so a task is
    prepared once. Waiting: pending, or left grading by a worker that died (its job is gone
    with it where the broker hands a job out once, as Redis does)."""
    G = Rollout.Grade
    rows = Rollout.objects.filter(Q(grade=G.PENDING) | Rollout.stale())
    if rollout_ids is not None:
        rows = rows.filter(pk__in=rollout_ids)
    grouped: dict[int, list[int]] = defaultdict(list)
    for pk, candidate_id in rows.order_by("id").values_list("pk", "candidate_id"):
        grouped[candidate_id].append(pk)
    return dict(grouped)


def rollouts_regrade(
    *, candidate_id: int, rollout_ids: list[int], engine: Engine | None = None
) -> dict[str, int]:
    """Grade the rollouts of one task from their collected /app; counts by outcome.

    Infrastructure failures leave a rollout ungraded with the reason, never scored.
    """
    held = _claim_grading(candidate_id, rollout_ids)
    counts = {"graded": 0, "ungraded": 0, "not_claimed": len(rollout_ids) - len(held)}
    if not held:
        return counts
    # Every held row beats until its grade is recorded, so a dead worker's are known in minutes.
    with Heartbeat(Rollout.objects.filter(pk__in=held, grade=Rollout.Grade.GRADING)):
        _grade_held(candidate_id, held, counts, engine)
    return counts


def _grade_held(
    candidate_id: int, held: list[int], counts: dict[str, int], engine: Engine | None
) -> None:
    candidate = Candidate.objects.filter(pk=candidate_id).first()
    grader: TaskGrader | None = None
    problem = ""
    if candidate is None or not candidate.task_dir:
        problem = f"the kept task (candidate {candidate_id}) is gone"
    else:
        # A mined task is graded by our grader kit, an authored one by its own tests/test.sh.
        source = mined_task if candidate.mined else authored_task
        try:
            engine = engine or Engine.from_env()
            grader = TaskGrader.prepare(
                Path(candidate.task_dir),
                engine=engine,
                run_id=_run_id(candidate_id),
                source=source,
            )
        except InfraError as exc:
            problem = f"Docker is not usable: {exc}"
    for rollout in Rollout.objects.filter(pk__in=held).order_by("id"):
        if grader is None:
            _ungraded(rollout, problem)
            counts["ungraded"] += 1
            continue
        app = Path(rollout.app_dir) if rollout.app_dir else None
        result = grader.grade(app, harbor_reward=rollout.harbor_reward)
        detail = {
            "evidence": dict(result.evidence),
            "seconds": round(result.seconds, 3),
            "agrees_with_harbor": result.agrees,
        }
        if result.reward is None:
            _ungraded(rollout, str(result.evidence.get("infra_error") or "the grader failed"))
            counts["ungraded"] += 1
            continue
        Rollout.objects.filter(pk=rollout.pk).update(
            reward=result.reward, grade=Rollout.Grade.GRADED, grade_detail=_kept(rollout) | detail
        )
        counts["graded"] += 1


def _ungraded(rollout: Rollout, why: str) -> None:
    Rollout.objects.filter(pk=rollout.pk).update(
        reward=None, grade=Rollout.Grade.UNGRADED, grade_detail=_kept(rollout) | {"reason": why}
    )


def _kept(rollout: Rollout) -> dict[str, Any]:
    """What a grade keeps of the import's detail: the rollout a named duplicate repeats."""
    detail = rollout.grade_detail or {}
    return {"duplicate_of": detail["duplicate_of"]} if "duplicate_of" in detail else {}


def rollout_regrade_again(*, user: AbstractBaseUser, rollout_id: int) -> Rollout:
    """Put an ungraded (or graded) rollout back in line for grading."""
    require(user, RUN_EVAL, "re-grade rollouts")
    with transaction.atomic():
        rollout = Rollout.objects.select_for_update().filter(pk=rollout_id).first()
        if rollout is None:
            raise Invalid(f"rollout {rollout_id} does not exist")
        before = {"grade": rollout.grade, "reward": rollout.reward}
        rollout.grade, rollout.reward = Rollout.Grade.PENDING, None
        rollout.save(update_fields=["grade", "reward"])
        audit_event_record(
            actor=user, verb="rollout.regrade", target=rollout, before=before, after=None
        )
    return rollout


def _known(user: AbstractBaseUser | None) -> bool:
    return user is not None and user.is_authenticated
