from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.db import DatabaseError

from trajectories.core import formats
from trajectories.management.terminal import Unstyled
from trajectories.services.ingest import IngestSummary, ingest_run_create, ingest_run_execute
from trajectories.tasks import replays_enqueue

LISTED = 10  # failures, skips and warnings printed one per line before the rest are counted


class Command(BaseCommand):
    help = (
        "Ingest trajectories (ATIF, Claude Code, Codex, pi) from files or directories. "
        "Exit 0 when something was ingested or all were duplicates, 1 when nothing usable, "
        "2 on a setup error."
    )
    # The checks import every URLconf and view of the project, a second of start-up on each
    # run; ingest uses none of them (`manage.py check` still runs them all).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+", help="files or directories (walked recursively)")
        parser.add_argument("--format", default="auto", choices=("auto", *formats.FORMATS))
        parser.add_argument(
            "--scan", action="store_true", help="screen each trajectory with atif-scan"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def handle(self, *args, **options) -> None:
        paths = [Path(p) for p in options["paths"]]
        missing = [str(p) for p in paths if not p.exists() and not p.is_symlink()]
        if missing:
            raise CommandError(f"no such file or directory: {', '.join(missing)}", returncode=2)
        try:
            run = ingest_run_create(paths=paths, fmt=options["format"], scan=options["scan"])
        except DatabaseError as exc:
            raise CommandError(
                f"the database is not ready ({exc}); run `python manage.py migrate` first",
                returncode=2,
            ) from None
        summary = IngestSummary()
        bar = _ProgressBar(self.stderr, summary, quiet=options["json"])
        try:
            ingest_run_execute(run_id=run.id, progress=bar, summary=summary)
        finally:
            bar.close()
        replays_enqueue([*summary.trajectory_ids, *summary.replay_again])
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_json()))
        else:
            self._report(summary)
        if not summary.usable:
            sys.exit(1)

    def _report(self, summary: IngestSummary) -> None:
        by_format = ", ".join(f"{k} {v}" for k, v in summary.by_format.items() if v) or "none"
        self.stdout.write(
            f"{summary.files} files: {summary.ingested} ingested ({by_format}), "
            f"{summary.partial} partial, {summary.duplicates} duplicates, "
            f"{summary.twins} more recordings of stored sessions, "
            f"{len(summary.skipped)} skipped, {len(summary.failed)} failed"
        )
        for label, items in (
            ("failed ", summary.failed),
            ("warning", summary.warnings),
            ("skipped", summary.skipped),
        ):
            for item in items[:LISTED]:
                line = f":{item['line']}" if item.get("line") else ""
                self.stderr.write(f"{label} {item['path']}{line}: {item['reason']}")
            if len(items) > LISTED:
                self.stderr.write(f"{label} … and {len(items) - LISTED} more (see --json)")


class _ProgressBar:
    """A tqdm bar on a terminal: the file just done, counts so far and the elapsed time.

    Silent with ``--json`` and when stderr is not a terminal (a pipe, a log file, a worker).
    """

    def __init__(self, stderr: OutputWrapper, summary: IngestSummary, *, quiet: bool) -> None:
        self._summary = summary
        self._bar: Any = None
        if quiet or not stderr.isatty():
            return
        from tqdm import tqdm

        # Started now, so the elapsed time counts the first file too; the total comes with it.
        self._bar = tqdm(
            total=None, unit="file", desc="ingest", file=Unstyled(stderr), dynamic_ncols=True
        )

    def __call__(self, done: int, total: int, path: str) -> None:
        if self._bar is None:
            return
        s = self._summary
        self._bar.total = total
        self._bar.set_postfix_str(
            f"{s.ingested} ingested, {s.partial} partial, {s.duplicates} duplicates, "
            f"{len(s.skipped)} skipped, {len(s.failed)} failed · {Path(path).name[:40]}",
            refresh=False,
        )
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
