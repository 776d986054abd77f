"""Writes for trajectories: ingest runs and the rows they create.

The core (`trajectories.core.formats`) turns a file into ATIF; this module decides what is stored,
deduplicates by content hash, keeps a file that records a session already stored from another file
as one more source of that trajectory (`core.sessions` says when), and records every skipped or
failed file on the run, and every line a stored trajectory lost or had repaired (its warnings,
which make it partial).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from groundwork.core.failures import said
from groundwork.jobs.claiming import claim
from groundwork.jobs.heartbeat import Heartbeat, dead_before

from .core import formats, sessions
from .core import replay as core_replay
from .models import (
    Command,
    IngestIssue,
    IngestRun,
    Replay,
    ReplayChunk,
    SourceFile,
    Step,
    Trajectory,
)
from .selectors import replay_inputs
from .store import DbBlobs, sha256_hex

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]

# A damaged file can have thousands of bad lines; past this many its warnings are summed up
# in one more row, so a run's issues stay readable and cheap to store.
WARNINGS_PER_FILE = 100


@dataclass
class IngestSummary:
    files: int = 0
    ingested: int = 0
    duplicates: int = 0
    twins: int = 0  # files recording a session already stored: sources of that trajectory
    partial: int = 0  # ingested with warnings: some lines skipped or repaired
    skipped: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    by_format: dict[str, int] = field(default_factory=lambda: dict.fromkeys(formats.FORMATS, 0))
    trajectory_ids: list[int] = field(default_factory=list)
    # Trajectories whose bytes, or whose session (twins), were already stored: part of this
    # batch's input all the same.
    duplicate_ids: list[int] = field(default_factory=list)
    # Stored trajectories replayed before a subagent of theirs arrived in this batch.
    replay_again: list[int] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "ingested": self.ingested,
            "duplicates": self.duplicates,
            "twins": self.twins,
            "partial": self.partial,
            "skipped": self.skipped,
            "failed": self.failed,
            "warnings": self.warnings,
            "by_format": self.by_format,
        }

    @property
    def usable(self) -> bool:
        return self.ingested > 0 or self.duplicates > 0 or self.twins > 0


def ingest_run_create(
    *, paths: Iterable[str | Path], fmt: str = "auto", scan: bool = False, user: Any = None
) -> IngestRun:
    if fmt != "auto" and fmt not in formats.FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use auto or one of {', '.join(formats.FORMATS)}")
    return IngestRun.objects.create(
        paths=[str(Path(p)) for p in paths], format=fmt, scan=scan, created_by=user
    )


def ingest_run_execute(
    *,
    run_id: int,
    progress: Progress | None = None,
    summary: IngestSummary | None = None,
    twins_under: Path | None = None,
) -> IngestSummary | None:
    """Ingest every file of the run. Returns None when another worker holds the run.

    ``progress(done, total, path)`` is called after each input; ``summary``, when given, is
    the one filled as the run goes, for a caller that shows the counts while it runs.
    ``twins_under`` scopes the twin rule to a folder: a file is then another recording only of
    a trajectory first seen under it. A Harbor trial's logs are that trial's own; another
    trial repeating the session id (a replay of one recorded session, a rerun) ran by itself.
    """
    ingest_runs_interrupted(but=run_id)  # this run, if dead, is taken over below
    if not IngestRun.claim(run_id, status=IngestRun.Status.RUNNING):
        return None
    run = IngestRun.objects.get(id=run_id)
    with Heartbeat(IngestRun.objects.filter(id=run_id)):
        return _ingest(
            run, progress, summary if summary is not None else IngestSummary(), twins_under
        )


def ingest_runs_interrupted(*, but: int | None = None) -> int:
    """Mark failed the running runs whose process died (no heartbeat for a few beats): a killed
    ``manage.py ingest`` has no job to take its run over. The number marked."""
    S = IngestRun.Status
    dead = IngestRun.objects.filter(status=S.RUNNING, heartbeat_at__lt=dead_before())
    return dead.exclude(id=but).update(
        status=S.FAILED,
        finished_at=timezone.now(),
        error="interrupted: its process stopped (no heartbeat); ingest the paths again",
    )


def _ingest(
    run: IngestRun,
    progress: Progress | None,
    summary: IngestSummary,
    twins_under: Path | None = None,
) -> IngestSummary:
    # One index of folders for the batch: every file of a folder shares its one listing.
    folders = formats.Folders()
    try:
        inputs = formats.survey(Path(p) for p in run.paths)
        total = summary.files = len(inputs.skipped) + len(inputs.files)
        IngestRun.objects.filter(id=run.id).update(files_total=total)
        done = 0
        for unreadable in inputs.skipped:
            _issue(run, summary, unreadable.path, IngestIssue.Kind.SKIPPED, unreadable.reason)
            done += 1
            if progress:
                progress(done, total, _path_text(unreadable.path))
        for path in inputs.files:
            _ingest_file(run, path, summary, folders, twins_under)
            done += 1
            if progress:
                progress(done, total, _path_text(path))
            if done % 20 == 0 or done == total:
                IngestRun.objects.filter(id=run.id).update(
                    files_done=done, ingested=summary.ingested, duplicates=summary.duplicates
                )
        summary.replay_again = subagents_link()
    except Exception as exc:
        log.exception("ingest run %s failed", run.id)
        IngestRun.objects.filter(id=run.id).update(
            status=IngestRun.Status.FAILED, finished_at=timezone.now(), error=str(exc)[:2000]
        )
        raise
    IngestRun.objects.filter(id=run.id).update(
        status=IngestRun.Status.DONE,
        finished_at=timezone.now(),
        files_done=summary.files,
        ingested=summary.ingested,
        duplicates=summary.duplicates,
    )
    return summary


def _path_text(path: Path) -> str:
    """The path as storable text: bytes of a name that are not UTF-8 become ``\\xNN``.

    A file name is bytes; Python carries the undecodable ones as lone surrogates, which no
    database driver or page can encode.
    """
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _issue(
    run: IngestRun,
    summary: IngestSummary,
    path: Path,
    kind: str,
    reason: str,
    line: int | None = None,
) -> None:
    shown = _path_text(path)
    IngestIssue.objects.create(run=run, path=shown, line=line, kind=kind, reason=reason)
    entry: dict[str, Any] = {"path": shown, "reason": reason}
    if line is not None:
        entry["line"] = line
    (summary.skipped if kind == IngestIssue.Kind.SKIPPED else summary.failed).append(entry)


def _ingest_file(
    run: IngestRun,
    path: Path,
    summary: IngestSummary,
    folders: formats.Folders,
    twins_under: Path | None = None,
) -> None:
    # The whole file, store included, is one burst of allocations over a large live heap.
    with formats.collector_paused():
        try:
            data = formats.read_bytes(path)
        except formats.IngestError as exc:
            _issue(run, summary, path, IngestIssue.Kind.FAILED, exc.reason)
            return
        sha = sha256_hex(data)
        existing = SourceFile.objects.filter(sha256=sha).values_list("trajectory__id", "twin_of_id")
        if existing:
            summary.duplicates += 1
            summary.duplicate_ids.extend(i for pair in existing for i in pair if i is not None)
            return
        try:
            loaded = formats.load(path, run.format, data=data, folders=folders)
        except formats.IngestError as exc:
            _issue(run, summary, path, IngestIssue.Kind.FAILED, exc.reason, exc.line)
            return
        if isinstance(loaded, formats.NotTrajectory):
            _issue(run, summary, path, IngestIssue.Kind.SKIPPED, loaded.reason)
            return
        twin_of = _stored_session(loaded, twins_under)
        if twin_of is not None:
            _twin_ingest(run, path, data, sha, loaded, twin_of, summary)
            return
        findings: list[dict[str, Any]] = []
        blocked = False
        if run.scan:
            from .core import scan as scanner

            try:
                result = scanner.scan(loaded.atif)
            except scanner.ScanError as exc:
                reason = f"atif-scan could not read it: {exc}"
                _issue(run, summary, path, IngestIssue.Kind.FAILED, reason)
                return
            findings = result.to_json()["findings"]
            blocked = result.blocks(settings.TRAJ2ENV["SCAN_BLOCK_SEVERITY"])
            if settings.TRAJ2ENV["SCAN_BLOCK_SECRETS"]:
                secrets = scanner.secrets_finding(result, loaded.atif)
                if secrets is not None:
                    findings.append(asdict(secrets))
                    blocked = True
        try:
            with transaction.atomic():
                trajectory = trajectory_store(
                    path=path,
                    data=data,
                    sha=sha,
                    loaded=loaded,
                    scanned=run.scan,
                    findings=findings,
                    blocked=blocked,
                )
                shown = _warnings_store(run, trajectory, path, loaded.warnings)
        except IntegrityError:
            # Another run stored the same bytes between our check and our insert.
            summary.duplicates += 1
            return
        summary.ingested += 1
        summary.by_format[loaded.format] = summary.by_format.get(loaded.format, 0) + 1
        summary.trajectory_ids.append(trajectory.id)
        if shown:
            summary.partial += 1
            summary.warnings.extend(shown)


def _twin_ingest(
    run: IngestRun,
    path: Path,
    data: bytes,
    sha: str,
    loaded: formats.Loaded,
    trajectory: Trajectory,
    summary: IngestSummary,
) -> None:
    try:
        with transaction.atomic():
            twin_source_store(path=path, data=data, sha=sha, fmt=loaded.format, twin_of=trajectory)
            # The lines this file lost are named on the run; the trajectory was made from
            # another file, so they do not make it partial.
            shown = _warnings_store(run, trajectory, path, loaded.warnings)
    except IntegrityError:
        summary.duplicates += 1
        return
    summary.twins += 1
    summary.duplicate_ids.append(trajectory.id)
    summary.warnings.extend(shown)


def _recording(loaded: formats.Loaded) -> sessions.Recording:
    steps = loaded.atif.get("steps") or []
    return sessions.Recording(
        session_id=(loaded.meta.session_id or "")[:200],
        first_request=sessions.first_request(
            (str(s.get("source", "")), _text(s.get("message")), bool(s.get("is_copied_context")))
            for s in steps
        ),
        started_at=_parse_when(loaded.meta.started_at),
        is_subagent=loaded.meta.is_subagent,
    )


def _stored_session(loaded: formats.Loaded, under: Path | None = None) -> Trajectory | None:
    """The stored trajectory of the session ``loaded`` records, if another file made one
    (a file first seen under ``under``, when given).

    Two workers ingesting a session's two files at once can each store a trajectory: the check
    and the insert are not one statement. A later ingest of either file then finds the first.
    """
    new = _recording(loaded)
    if not new.session_id:
        return None
    stored_rows = Trajectory.objects.filter(session_id=new.session_id)
    if under is not None:
        stored_rows = stored_rows.filter(source__path__startswith=_path_text(under) + "/")
    for stored in stored_rows.order_by("id"):
        first = (
            Step.objects.filter(trajectory=stored, source="user", is_copied_context=False)
            .order_by("index")
            .values_list("message", flat=True)
            .first()
        )
        recorded = sessions.Recording(
            session_id=stored.session_id,
            first_request=first or "",
            started_at=stored.started_at,
            is_subagent=stored.is_subagent,
        )
        if sessions.same_session(recorded, new):
            return stored
    return None


def twin_source_store(
    *, path: Path, data: bytes, sha: str, fmt: str, twin_of: Trajectory
) -> SourceFile:
    """Keep ``data`` as another recording of ``twin_of``'s session, not a trajectory of its own."""
    blobs = DbBlobs()
    raw_sha = blobs.put(data)
    blobs.flush()
    return SourceFile.objects.create(
        sha256=sha,
        path=_path_text(path),
        format=fmt,
        size=len(data),
        raw_id=raw_sha,
        twin_of=twin_of,
    )


def _warnings_store(
    run: IngestRun,
    trajectory: Trajectory,
    path: Path,
    warnings: tuple[formats.LineWarning, ...],
) -> list[dict[str, Any]]:
    """One warning row per skipped or repaired line (the first WARNINGS_PER_FILE, then a sum)."""
    if not warnings:
        return []
    shown = _path_text(path)
    entries = [{"path": shown, "line": w.line, "reason": w.reason} for w in warnings]
    kept = entries[:WARNINGS_PER_FILE]
    if len(entries) > WARNINGS_PER_FILE:
        rest = entries[WARNINGS_PER_FILE:]
        kept.append(
            {
                "path": shown,
                "line": None,
                "reason": f"{len(rest)} more lines skipped or repaired, "
                f"from line {rest[0]['line']} to line {rest[-1]['line']}",
            }
        )
    IngestIssue.objects.bulk_create(
        IngestIssue(
            run=run,
            trajectory=trajectory,
            path=entry["path"],
            line=entry["line"],
            kind=IngestIssue.Kind.WARNING,
            reason=entry["reason"],
        )
        for entry in kept
    )
    return [{k: v for k, v in entry.items() if v is not None} for entry in kept]


def _text(message: Any) -> str:
    """ATIF messages are a string or a list of content parts; images become a marker."""
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    parts = []
    for part in message:
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append(part.get("text") or "")
        elif isinstance(part, dict):
            parts.append(f"[{part.get('type', 'part')}]")
    return "\n".join(parts)


def _parse_when(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parse_datetime(value.replace("Z", "+00:00"))
    except ValueError:
        return None


@transaction.atomic
def trajectory_store(
    *,
    path: Path,
    data: bytes,
    sha: str,
    loaded: formats.Loaded,
    scanned: bool = False,
    findings: list[dict[str, Any]] | None = None,
    blocked: bool = False,
) -> Trajectory:
    meta = loaded.meta
    atif = loaded.atif
    # A blob's key is its digest: one bulk INSERT that ignores rows already there stores all
    # three, where looking each up first took three round trips more per file.
    blobs = DbBlobs()
    raw_sha = blobs.put(data)
    atif_sha = blobs.put(json.dumps(atif, separators=(",", ":")).encode())
    side_sha = (
        blobs.put(json.dumps(loaded.side_data, separators=(",", ":")).encode())
        if loaded.side_data
        else None
    )
    blobs.flush()
    source = SourceFile.objects.create(
        sha256=sha, path=_path_text(path), format=loaded.format, size=len(data), raw_id=raw_sha
    )
    trajectory = Trajectory.objects.create(
        source=source,
        format=loaded.format,
        schema_version=str(atif.get("schema_version", "")),
        agent_name=(meta.agent_name or "")[:100],
        agent_version=(meta.agent_version or "")[:100],
        model_name=(meta.model_name or "")[:200],
        session_id=(meta.session_id or "")[:200],
        parent_session_id=(meta.parent_session_id or "")[:200],
        is_subagent=meta.is_subagent,
        title=(meta.title or "")[:300],
        cwd=meta.cwd or "",
        started_at=_parse_when(meta.started_at),
        steps_count=meta.steps,
        prompt_tokens=meta.prompt_tokens,
        completion_tokens=meta.completion_tokens,
        cost_usd=meta.cost_usd,
        scanned=scanned,
        scan_findings=findings or [],
        blocked=blocked,
        partial=loaded.partial,
        harbor_task=(meta.harbor_task or "")[:300],
        harbor_reward=meta.harbor_reward,
        atif_id=atif_sha,
        side_data_id=side_sha,
    )
    _steps_insert(trajectory.id, atif.get("steps") or [])
    return trajectory


_STEP_COLUMNS = (
    "trajectory",
    "index",
    "step_id",
    "source",
    "timestamp",
    "model_name",
    "message",
    "reasoning",
    "tool_calls",
    "observations",
    "is_copied_context",
)


def _steps_insert(trajectory_id: int, steps: list[dict[str, Any]]) -> None:
    """Insert one row per ATIF step with a single executemany.

    bulk_create spends most of a 20,000-step ingest building SQL per row. Integers, text and
    booleans go to the driver as they are (every backend adapts them natively); only the two
    JSON columns need their field's preparation, which differs by backend.
    """
    fields = [Step._meta.get_field(name) for name in _STEP_COLUMNS]
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(Step._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))})"
    )
    json_prep = Step._meta.get_field("tool_calls").get_db_prep_save

    def row(i: int, step: dict[str, Any]) -> tuple[Any, ...]:
        return (
            trajectory_id,
            i,
            int(step.get("step_id") or i + 1),
            str(step.get("source", ""))[:10],
            str(step.get("timestamp") or "")[:40],
            str(step.get("model_name") or "")[:200],
            _text(step.get("message")),
            step.get("reasoning_content") or "",
            json_prep(step.get("tool_calls") or [], connection),
            json_prep((step.get("observation") or {}).get("results") or [], connection),
            bool(step.get("is_copied_context")),
        )

    with connection.cursor() as cursor:
        for start in range(0, len(steps), 2000):
            cursor.executemany(
                sql, [row(i, s) for i, s in enumerate(steps[start : start + 2000], start)]
            )


def subagents_link() -> list[int]:
    """Point subagent logs at their parent session once both are stored, whatever the order.

    A parent already replayed without a subagent it now has is set back to ingested: its
    stored replay lacks the subagent's edits. Returns those parents' ids, to replay again.
    """
    S = Trajectory.Status
    stale: list[int] = []
    orphans = Trajectory.objects.filter(parent__isnull=True).exclude(parent_session_id="")
    for child in orphans.only("id", "parent_session_id", "format"):
        parents = list(
            Trajectory.objects.filter(session_id=child.parent_session_id, is_subagent=False)
            .exclude(id=child.id)
            .only("id", "format")
        )
        # A Harbor ATIF export of the same session shares its id; the raw log of the child's own
        # format is the better parent.
        best = next(
            (p for p in parents if p.format == child.format), parents[0] if parents else None
        )
        if best is not None:
            Trajectory.objects.filter(id=child.id).update(parent=best)
            # Conditional: a replay running now reads the subagent itself.
            done = Trajectory.objects.filter(id=best.id, status__in=(S.REPLAYED, S.REPLAY_FAILED))
            if done.update(status=S.INGESTED, replay_error=""):
                stale.append(best.id)
    return stale


def _claim_replay(trajectory_id: int) -> bool:
    S = Trajectory.Status
    return claim(
        Trajectory.objects.filter(id=trajectory_id),
        waiting=Q(status=S.INGESTED),
        running=Q(status=S.REPLAYING),
        started="replay_started_at",
        status=S.REPLAYING,
        replay_error="",
    )


def replay_compute(*, trajectory_id: int) -> Replay | None:
    """Replay a trajectory once and store its file states, commands and checks.

    Returns None when the row is gone or another worker holds it. A replay that raises is
    recorded as failed on the row: the same input would fail the same way on a retry.
    """
    if not _claim_replay(trajectory_id):
        return None
    trajectory = Trajectory.objects.select_related("atif", "side_data").get(id=trajectory_id)
    started = time.perf_counter()
    try:
        blobs = DbBlobs()
        result = replay_inputs(trajectory).replay(blobs)
        blobs.flush()
        index = core_replay.StateIndex.build(
            result, every=settings.TRAJ2ENV["REPLAY_CHECKPOINT_EVERY"]
        )
        with transaction.atomic():
            replay = _replay_store(trajectory, result, index, started)
            Trajectory.objects.filter(id=trajectory_id).update(status=Trajectory.Status.REPLAYED)
    except Exception as exc:
        log.exception("replay of trajectory %s failed", trajectory_id)
        Trajectory.objects.filter(id=trajectory_id).update(
            status=Trajectory.Status.REPLAY_FAILED,
            replay_error=said(exc)[:2000],
        )
        return None
    return replay


def _replay_store(trajectory: Trajectory, result, index, started: float) -> Replay:
    summary = result.summary()
    Replay.objects.filter(trajectory=trajectory).delete()
    Command.objects.filter(trajectory=trajectory).delete()
    chunks = [
        ReplayChunk(number=n, checkpoint=dict(index.checkpoints[n]), deltas=index.block(n))
        for n in range(len(index.checkpoints))
    ]
    stored = sum(len(json.dumps(c.checkpoint)) + len(json.dumps(c.deltas)) for c in chunks)
    replay = Replay.objects.create(
        trajectory=trajectory,
        root=result.root or "",
        every=index.every,
        events=index.n_events,
        files_known=summary["files_known"],
        files_lost=summary["files_lost"],
        files_partial=summary["files_partial"],
        uncertain_trees=summary["uncertain_trees"],
        commands_count=summary["commands"],
        checks=summary["checks"],
        stored_bytes=stored,
        duration_ms=int((time.perf_counter() - started) * 1000),
    )
    for chunk in chunks:
        chunk.replay = replay
    ReplayChunk.objects.bulk_create(chunks, batch_size=200)
    Command.objects.bulk_create(
        (
            Command(
                trajectory=trajectory,
                index=c.index,
                step_index=c.step_index,
                event_index=c.event_index,
                tool_call_id=c.tool_call_id[:200],
                command=c.command,
                cwd=c.cwd or "",
                output=c.output,
                exit_code=c.exit_code,
                check_kind=str(c.check.kind) if c.check else "",
                check_language=(c.check.language or "") if c.check else "",
                check_runner=c.check.runner if c.check else "",
                check_masked=bool(c.check and c.check.masked),
            )
            for c in result.commands
        ),
        batch_size=500,
    )
    # One executemany instead of 20,000 ORM saves.
    q = connection.ops.quote_name
    sql = (
        f"UPDATE {q(Step._meta.db_table)} SET {q('events_start')} = %s, {q('events_end')} = %s "
        f"WHERE {q('trajectory_id')} = %s AND {q('index')} = %s"
    )
    with connection.cursor() as cursor:
        cursor.executemany(
            sql,
            [
                (index.step_events[i], index.step_events[i + 1], trajectory.id, i)
                for i in range(len(index.step_events) - 1)
            ],
        )
    return replay
