"""Pipeline runs: the trajectory_to_env stages over the database, with progress on the row.

Stages: ingest → replay → mine → write (→ build → verify, with Docker) → report. Each stage
reads and writes rows; the core packages do the work. A run can be cancelled between items.
Functions a django-q2 job calls return a ``Next``: what the job must queue after them.
Whoever runs the stages here may follow them with a ``progress`` callback (``StageProgress``
events: each stage's start, every item, its end); the django-q2 path passes none.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from groundwork.core.failures import said
from groundwork.jobs.containers import dead_run_containers_remove
from groundwork.jobs.heartbeat import Heartbeat, beat_seconds
from groundwork.llm import llm_client
from tasks_review.core.clones import (
    Overlay,
    Project,
    clone_overlay,
    session_focus,
    task_folder,
    task_overlay,
)
from tasks_review.core.config import GenerateConfig, parse_config
from tasks_review.core.families import mine
from tasks_review.core.families.common import Asks
from tasks_review.core.mining.candidate import RepairCandidate, presumed_note
from tasks_review.core.mining.scriptfiles import Above
from tasks_review.models import STAGES, Candidate, PipelineRun, empty_counts
from tasks_review.services.images import base_image_ref
from tasks_review.services.run_report import run_report_build, run_report_write
from tasks_review.services.taskwriting import candidate_payload, candidate_write_task
from tasks_review.services.verification import candidate_verify, candidates_verify
from trajectories.core import replay as core_replay
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats.trial import harbor_trial
from trajectories.models import Trajectory
from trajectories.selectors import replay_inputs
from trajectories.services.ingest import ingest_run_create, ingest_run_execute
from trajectories.services.replay import replay_compute
from trajectories.store import DbBlobs

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StageProgress:
    """Where a run is: ``done`` of ``total`` items of ``stage`` (total 0 while unknown), the
    run's counts so far and the seconds since the stage began; ``finished`` ends the stage."""

    run: int
    stage: str
    done: int
    total: int
    elapsed: float
    counts: Mapping[str, int] = field(default_factory=dict)
    finished: bool = False


Progress = Callable[[StageProgress], None]


class RunCancelled(Exception):
    """Raised between items when someone asked the run to stop."""


@dataclass(frozen=True, slots=True)
class Next:
    """What a queued job leaves to its caller: ``lanes`` more verify jobs of the run to queue
    (0: none), and a line for the job's result."""

    summary: str
    lanes: int = 0


def pipeline_run_create(
    *, config: GenerateConfig, config_path: str = "", user: Any = None
) -> PipelineRun:
    destination = config.output.destination or (settings.VAR_DIR / "tasks")
    data = config.to_dict()
    data["output"]["destination"] = str(destination)
    return PipelineRun.objects.create(
        config=data, config_path=config_path, destination=str(destination), created_by=user
    )


class _Run:
    """The state of one execution: the row, its counters and the drops so far."""

    def __init__(self, run: PipelineRun, progress: Progress | None) -> None:
        self.row = run
        # Checked when the run was made; a clone gone since is a reason on the run (mine).
        self.config: GenerateConfig = parse_config(
            run.config, base_dir=Path.cwd(), check_clones=False
        )
        self.counts = empty_counts()
        self.timings: dict[str, float] = {}
        self.progress = progress
        self.llm = llm_client()  # None: the LLM families are skipped (skipped_families)
        self._last_save = 0.0
        self._started = time.perf_counter()

    @contextmanager
    def stage(self, name: str, total: int = 0) -> Iterator[None]:
        assert name in STAGES
        self._started = time.perf_counter()
        self.row.stage, self.row.stage_done, self.row.stage_total = name, 0, total
        self.row.stage_started_at = timezone.now()
        self.save(force=True)
        self.report()
        yield
        self.timings[name] = round(time.perf_counter() - self._started, 3)
        self.save(force=True)
        self.report(finished=True)

    def step(self, done: int | None = None) -> None:
        self.row.stage_done = self.row.stage_done + 1 if done is None else done
        self.save()
        self.report()
        if PipelineRun.objects.filter(id=self.row.id, cancel_requested=True).exists():
            raise RunCancelled()

    def save(self, *, force: bool = False) -> None:
        # Progress is written at most a few times a second: the page polls it, nothing waits.
        now = time.monotonic()
        if not force and now - self._last_save < 0.25:
            return
        self._last_save = now
        self.row.counts = dict(self.counts)
        self.row.timings = dict(self.timings)
        PipelineRun.objects.filter(id=self.row.id).update(
            stage=self.row.stage,
            stage_done=self.row.stage_done,
            stage_total=self.row.stage_total,
            stage_started_at=self.row.stage_started_at,
            counts=self.row.counts,
            timings=self.row.timings,
        )

    def report(self, *, finished: bool = False) -> None:
        # Every item, unthrottled: a terminal bar redraws at its own pace, and nobody else
        # listens (the django-q2 path passes no callback).
        if self.progress is None:
            return
        self.progress(
            StageProgress(
                run=self.row.id,
                stage=self.row.stage,
                done=self.row.stage_done,
                total=self.row.stage_total,
                elapsed=round(time.perf_counter() - self._started, 3),
                counts=dict(self.counts),
                finished=finished,
            )
        )


def pipeline_run_execute(*, run_id: int, progress: Progress | None = None) -> PipelineRun | None:
    """Run every stage here, verifying ``jobs`` candidates at a time in threads (the generate
    command). Returns None when the run is not claimable (taken, finished, cancelled)."""
    run, _ = _execute(run_id, progress, queued=False)
    return run


def pipeline_run_execute_queued(*, run_id: int) -> Next:
    """The django-q2 path: every stage up to verify, which becomes one job per candidate in
    ``jobs`` lanes (``Next.lanes``; each is a ``pipeline_verify_next``). The last of them
    finishes the run, which stays running until then."""
    run, lanes = _execute(run_id, None, queued=True)
    if run is None:
        return Next("not claimed")
    if lanes:
        return Next(f"verifying {run.stage_total} candidates in {lanes} lanes", lanes=lanes)
    return Next(run.status)


def _execute(
    run_id: int, progress: Progress | None, *, queued: bool
) -> tuple[PipelineRun | None, int]:
    claimed = PipelineRun.claim(
        run_id,
        rows=PipelineRun.objects.filter(cancel_requested=False),
        on_reclaim=lambda: dead_run_containers_remove(f"pipeline-{run_id}"),
        status=PipelineRun.Status.RUNNING,
        counts=empty_counts(),
        timings={},
        error="",
    )
    if not claimed:
        return None, 0
    with Heartbeat(PipelineRun.objects.filter(id=run_id)):
        row, lanes = _stages(_Run(PipelineRun.objects.get(id=run_id), progress), queued=queued)
    if lanes:
        # The lanes beat their candidates; the run, left running, falls back to the job limit.
        PipelineRun.objects.filter(id=run_id).update(heartbeat_at=None)
    return row, lanes


def _stages(run: _Run, *, queued: bool) -> tuple[PipelineRun | None, int]:
    run_id = run.row.id
    status = PipelineRun.Status.DONE
    error = ""
    try:
        trajectories = _stage_ingest(run)
        replayed = _stage_replay(run, trajectories)
        candidates = _stage_mine(run, replayed)
        if not run.config.pipeline.options.propose_only:
            written = _stage_write(run, candidates)
            if settings.TRAJ2ENV["VERIFY"] and queued and written:
                return run.row, _stage_verify_queued(run, written)
            if settings.TRAJ2ENV["VERIFY"]:
                _stage_verify(run, written)
    except RunCancelled:
        status = PipelineRun.Status.CANCELLED
    except Exception as exc:
        log.exception("pipeline run %s failed", run_id)
        status, error = PipelineRun.Status.FAILED, said(exc)
    return _finish(run, status, error), 0


def _finish(run: _Run, status: str, error: str = "") -> PipelineRun:
    run.row.status = status
    run.save(force=True)
    started = time.perf_counter()
    report = run_report_build(run.row, run.counts, run.timings)
    run.timings["report"] = report["timings"]["report"] = round(time.perf_counter() - started, 3)
    PipelineRun.objects.filter(id=run.row.id).update(
        status=status,
        error=error[:4000],
        finished_at=timezone.now(),
        report=report,
        timings=run.timings,
    )
    run.row.refresh_from_db()
    run_report_write(run.row)
    return run.row


def _stage_ingest(run: _Run) -> list[int]:
    source = run.config.source
    options = run.config.pipeline.options
    with run.stage("ingest"):
        fmt = "auto" if source.format in ("auto", None) else source.format
        ingest = ingest_run_create(paths=[source.path], fmt=fmt, scan=options.scan)
        summary = ingest_run_execute(
            run_id=ingest.id, progress=lambda done, total, _p: _ingest_progress(run, done, total)
        )
        assert summary is not None
        ids = sorted({*summary.trajectory_ids, *summary.duplicate_ids})
        run.counts["files"] = summary.files
        run.counts["trajectories"] = len(ids)
        run.counts["blocked"] = Trajectory.objects.filter(id__in=ids, blocked=True).count()
        run.row.trajectories.set(ids)
    return ids


def _ingest_progress(run: _Run, done: int, total: int) -> None:
    run.row.stage_total = total
    run.step(done)


def _stage_replay(run: _Run, ids: list[int]) -> list[int]:
    todo = list(Trajectory.objects.filter(id__in=ids, blocked=False).values_list("id", flat=True))
    with run.stage("replay", total=len(todo)):
        for trajectory_id in todo:
            if Trajectory.objects.filter(
                id=trajectory_id, status=Trajectory.Status.INGESTED
            ).exists():
                replay_compute(trajectory_id=trajectory_id)
            run.step()
        replayed = list(
            Trajectory.objects.filter(id__in=todo, status=Trajectory.Status.REPLAYED).values_list(
                "id", flat=True
            )
        )
        run.counts["replayed"] = len(replayed)
    return replayed


def _stage_mine(run: _Run, ids: list[int]) -> list[Candidate]:
    options = run.config.pipeline.options
    clones = run.config.source.clones
    proposed: list[Candidate] = []
    overlays: list[dict[str, Any]] = []
    with run.stage("mine", total=len(ids)):
        for trajectory_id in ids:
            if options.limit is not None and len(proposed) >= options.limit:
                break
            trajectory = Trajectory.objects.select_related("atif", "side_data").get(
                id=trajectory_id
            )
            found, drops, overlay = _mine_one(
                trajectory, clones, options.families, run.llm, tasks=run.config.source.tasks
            )
            if overlay is not None:
                overlays.append({"trajectory": trajectory.id, **overlay.to_dict()})
                run.row.clones = overlays
                PipelineRun.objects.filter(id=run.row.id).update(clones=overlays)
            seen = set(Candidate.objects.filter(run=run.row).values_list("key", flat=True))
            earlier = _earlier_keys([c.key for c in found], run.row)
            for candidate in found:
                if candidate.key in seen:
                    continue  # the same fix recorded twice (a session and its Harbor export)
                if candidate.key in earlier:
                    # A re-run finds the task it made before: that candidate stays the task,
                    # with its verdicts, reviews, splits and rollouts; no pending copy.
                    seen.add(candidate.key)
                    run.counts["reused"] = run.counts.get("reused", 0) + 1
                    continue
                if options.limit is not None and len(proposed) >= options.limit:
                    break
                seen.add(candidate.key)
                proposed.append(_candidate_row(run.row, trajectory, candidate, overlay))
            for drop in drops:
                _drop_row(run.row, trajectory, drop, overlay)
            run.counts["candidates"] += len(found) + len(drops)
            run.counts["dropped"] += len(drops)
            run.step()
    return proposed


def _earlier_keys(keys: list[str], run: PipelineRun) -> set[str]:
    """Which of these content keys an earlier run already made a candidate of (dropped ones
    aside): a candidate is its content key, so a re-run reuses it instead of copying it."""
    earlier = Candidate.objects.filter(key__in=keys).exclude(run=run)
    return set(earlier.exclude(status=Candidate.Status.DROPPED).values_list("key", flat=True))


def _mine_one(
    trajectory: Trajectory,
    clones: Mapping[str, Path] | None = None,
    families: tuple[str, ...] = ("repair",),
    llm: Asks | None = None,
    *,
    tasks: Mapping[str, Path] | None = None,
) -> tuple[list[RepairCandidate], list[Any], Overlay | None]:
    """Replay again in memory (cheap, deterministic; the blobs are already stored) and mine
    every asked family (the LLM ones only with a client); over the clone's tree at the
    session's starting commit when ``clones`` has the project, else over the files a Harbor
    trial's task environment lays down (``tasks``, or the task beside the jobs folder): the
    overlay, None without one. The stored replay stays what the log alone shows."""
    inputs = replay_inputs(trajectory)
    blobs = DbBlobs()
    overlay = None
    if clones:
        project = Project.recorded(
            cwd=trajectory.cwd or inputs.root,
            started_at=trajectory.started_at,
            side_data=inputs.side_data,
        )

        # Asked only of a tree over the limits: what the log alone says the session touched.
        def focus() -> list[str]:
            return session_focus(inputs.replay(MemoryBlobs()))

        overlay = clone_overlay(clones, project, blobs, focus=focus)
    if overlay is None:
        overlay = _task_seed(trajectory, trajectory.cwd or inputs.root, tasks or {}, blobs)
    result = inputs.replay(blobs, seed=overlay.seed if overlay else None)
    if overlay is not None:
        overlay = overlay.after(result)
    index = core_replay.StateIndex.build(result)
    above = Above(overlay.above, overlay.here) if overlay is not None and overlay.above else None
    found, drops = mine(result, index, blobs, inputs.atif, families=families, llm=llm, above=above)
    blobs.flush()
    return found, drops, overlay


def _task_seed(
    trajectory: Trajectory, root: str | None, tasks: Mapping[str, Path], blobs: DbBlobs
) -> Overlay | None:
    """The seed a Harbor trial's task environment gives, when the trial's task folder is
    configured or beside its jobs folder; None for anything else."""
    trial = harbor_trial(Path(trajectory.source.path))
    folder = task_folder(tasks, trial) if trial is not None else None
    if folder is None:
        return None
    if not root:
        return Overlay(
            project=f"harbor task {folder.name}",
            clone=str(folder),
            reason="the trial recorded no directory to lay the task's files in",
        )
    return task_overlay(folder, root, blobs)


def _candidate_row(
    run: PipelineRun, trajectory: Trajectory, c: RepairCandidate, overlay: Overlay | None = None
) -> Candidate:
    payload = candidate_payload(c)
    if c.presumed:
        payload["presumed_note"] = presumed_note(c.presumed)
    if overlay is not None:
        payload["clone"] = overlay.to_dict()  # provenance: the commit the start was laid on
    return Candidate.objects.create(
        run=run,
        trajectory=trajectory,
        family=c.family,
        key=c.key,
        language=c.language,
        runner=c.runner,
        check_command=c.command,
        check_cwd=c.check_cwd,
        fail_step=c.fail_step_index,
        pass_step=c.pass_step_index,
        instruction=c.instruction,
        start_files=dict(c.start_files),
        reference_files=dict(c.ref_files),
        changed={"added": list(c.added), "modified": list(c.modified), "deleted": list(c.deleted)},
        payload=payload,
    )


def _drop_row(
    run: PipelineRun, trajectory: Trajectory, drop: Any, overlay: Overlay | None = None
) -> Candidate:
    return Candidate.objects.create(
        run=run,
        trajectory=trajectory,
        family=drop.family,
        key=_drop_key(trajectory, drop),
        status=Candidate.Status.DROPPED,
        language=drop.language[:20],
        check_command=drop.command,
        # a drop of no pair of runs (miner_failed) has no steps
        fail_step=drop.fail_step_index if drop.fail_step_index >= 0 else None,
        pass_step=drop.pass_step_index if drop.pass_step_index >= 0 else None,
        drop_stage=drop.stage,
        drop_reason=str(drop.reason),
        drop_detail=drop.detail,
        payload={
            **({"clone": overlay.to_dict()} if overlay is not None else {}),
            **({"llm": dict(drop.llm)} if drop.llm else {}),
        },
    )


def _drop_key(trajectory: Trajectory, drop: Any) -> str:
    if drop.family == "repair":
        return f"drop:{trajectory.id}:{drop.fail_command_index}:{drop.pass_command_index}"
    # The other families' drops sit at steps (a turn, a request), not at a pair of commands.
    return f"drop-{drop.family}:{trajectory.id}:{drop.fail_step_index}:{drop.pass_step_index}"


def _task_name(candidate: Candidate) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", (candidate.trajectory.title or "task").lower()).strip("-")
    return f"{slug[:40].strip('-') or 'task'}-{candidate.family}-{candidate.key[:10]}"


def _stage_write(run: _Run, candidates: list[Candidate]) -> list[int]:
    destination = Path(run.row.destination)
    base_image = base_image_ref()
    written_ids = []
    with run.stage("write", total=len(candidates)):
        for candidate in candidates:
            written = candidate_write_task(
                candidate=candidate,
                destination=destination,
                task_name=_task_name(candidate),
                base_image=base_image,
            )
            run.counts["prepared"] += 1
            if written:
                run.counts["written"] += 1
                written_ids.append(candidate.id)
            else:
                run.counts["dropped"] += 1
            run.step()
    return written_ids


def _stage_verify(run: _Run, candidate_ids: list[int]) -> None:
    options = run.config.pipeline.options
    with run.stage("verify", total=len(candidate_ids)):
        candidates_verify(
            candidate_ids=candidate_ids,
            run_id=f"pipeline-{run.row.id}",
            jobs=options.jobs,
            on_done=run.step,
        )
        _count_outcomes(run)


def _count_outcomes(run: _Run) -> None:
    outcomes = Candidate.objects.filter(run=run.row, verify_started_at__isnull=False)
    run.counts["kept"] = outcomes.filter(status=Candidate.Status.KEPT).count()
    run.counts["dropped"] += outcomes.filter(status=Candidate.Status.DROPPED).count()
    run.counts["ungraded"] = outcomes.filter(status=Candidate.Status.UNGRADED).count()


def _stage_verify_queued(run: _Run, candidate_ids: list[int]) -> int:
    """Enter the verify stage; the number of lanes to start."""
    run.row.stage, run.row.stage_done, run.row.stage_total = "verify", 0, len(candidate_ids)
    run.row.stage_started_at = timezone.now()
    run.save(force=True)
    return min(max(1, run.config.pipeline.options.jobs), len(candidate_ids))


def pipeline_verify_next(*, run_id: int) -> Next:
    """One lane step of a queued verify stage: verify the run's next candidate, ask for the
    lane's next step, and finish the run when nothing is left to verify. Never raises for a
    candidate's sake (``candidate_verify`` records harness errors as ungraded)."""
    run = PipelineRun.objects.get(id=run_id)
    verified = None
    if not run.finished and not run.cancel_requested:
        for candidate_id in _waiting(run):
            verified = candidate_verify(candidate_id=candidate_id, run_id=f"pipeline-{run_id}")
            if verified is not None:
                break
    run.refresh_from_db()
    S = Candidate.Status
    pending = Candidate.objects.filter(run=run, status__in=(S.WRITTEN, S.VERIFYING))
    PipelineRun.objects.filter(id=run_id, finished_at__isnull=True).update(
        stage_done=max(0, run.stage_total - pending.count())
    )
    if not run.cancel_requested and pending.filter(status=S.WRITTEN).exists():
        return Next(f"verified {verified.id if verified else 'nothing'}; more to verify", lanes=1)
    if pending.filter(status=S.VERIFYING).exists():
        # The lane stays while another verifies, looking again every beat: a broker that loses
        # a killed worker's job (Redis hands each job out once) leaves that candidate to the
        # lanes still running, and `_waiting` gives it to one once its row falls silent.
        time.sleep(beat_seconds())
        return Next("watching the lanes still verifying", lanes=1)
    # The last lane out finishes the run, exactly once.
    if not PipelineRun.objects.filter(id=run_id, finished_at__isnull=True).update(
        finished_at=timezone.now()
    ):
        return Next("already finished")
    run.refresh_from_db()
    state = _Run(run, None)
    state.counts = dict(run.counts)
    state.timings = dict(run.timings)
    if run.stage_started_at:
        state.timings["verify"] = round((timezone.now() - run.stage_started_at).total_seconds(), 3)
    _count_outcomes(state)
    status = PipelineRun.Status.CANCELLED if run.cancel_requested else PipelineRun.Status.DONE
    _finish(state, status)
    return Next(f"finished the run ({status})")


def candidate_retry(*, run_id: int, candidate_id: int) -> str:
    """Verify an ungraded candidate again, then bring the run's counts and report up to date."""
    verified = candidate_verify(candidate_id=candidate_id, run_id=f"pipeline-{run_id}")
    run = PipelineRun.objects.get(id=run_id)
    S = Candidate.Status
    rows = Candidate.objects.filter(run=run)
    counts = dict(run.counts)
    counts.update(
        kept=rows.filter(status=S.KEPT).count(),
        ungraded=rows.filter(status=S.UNGRADED).count(),
        dropped=rows.filter(status=S.DROPPED).count(),
    )
    report = run_report_build(run, counts, dict(run.timings))
    PipelineRun.objects.filter(id=run_id).update(counts=counts, report=report)
    run.refresh_from_db()
    run_report_write(run)
    return f"candidate {candidate_id}: {verified.status if verified else 'not claimable'}"


def _waiting(run: PipelineRun) -> list[int]:
    """The run's candidates a lane may take: written, or verifying under a worker that died."""
    S = Candidate.Status
    return list(
        Candidate.objects.filter(run=run)
        .filter(Q(status=S.WRITTEN) | Candidate.stale())
        .order_by("id")
        .values_list("id", flat=True)[:20]
    )
