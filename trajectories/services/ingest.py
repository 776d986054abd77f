"""Ingest runs: read every file of a run and decide what is stored.

The core (`trajectories.core.formats`) turns a file into ATIF; this module deduplicates by
content hash, keeps a file that records a session already stored from another file as one more
source of that trajectory (`sessions.py`), stores the rest (`trajectories.py`), and records every
skipped or failed file on the run, and every line a stored trajectory lost or had repaired (its
warnings, which make it partial).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from groundwork.jobs.heartbeat import Heartbeat, dead_before

from ..core import formats
from ..models import IngestIssue, IngestRun, SourceFile, Trajectory
from ..store import sha256_hex
from .sessions import stored_session, subagents_link, twin_source_store
from .trajectories import path_text, trajectory_store

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
                progress(done, total, path_text(unreadable.path))
        for path in inputs.files:
            _ingest_file(run, path, summary, folders, twins_under)
            done += 1
            if progress:
                progress(done, total, path_text(path))
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


def _issue(
    run: IngestRun,
    summary: IngestSummary,
    path: Path,
    kind: str,
    reason: str,
    line: int | None = None,
) -> None:
    shown = path_text(path)
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
        twin_of = stored_session(loaded, twins_under)
        if twin_of is not None:
            _twin_ingest(run, path, data, sha, loaded, twin_of, summary)
            return
        findings: list[dict[str, Any]] = []
        blocked = False
        if run.scan:
            from ..core import scan as scanner

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


def _warnings_store(
    run: IngestRun,
    trajectory: Trajectory,
    path: Path,
    warnings: tuple[formats.LineWarning, ...],
) -> list[dict[str, Any]]:
    """One warning row per skipped or repaired line (the first WARNINGS_PER_FILE, then a sum)."""
    if not warnings:
        return []
    shown = path_text(path)
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
