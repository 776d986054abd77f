from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from trajectories.core import formats
from trajectories.services import ingest_run_create, ingest_run_execute
from trajectories.tasks import replays_enqueue

PROGRESS_BAR_FROM = 20  # files; fewer finish before a bar is worth drawing


class Command(BaseCommand):
    help = (
        "Ingest trajectories (ATIF, Claude Code, Codex, pi) from files or directories. "
        "Exit 0 when something was ingested or all were duplicates, 1 when nothing usable, "
        "2 on a setup error."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+", help="files or directories (walked recursively)")
        parser.add_argument("--format", default="auto", choices=("auto", *formats.FORMATS))
        parser.add_argument(
            "--scan", action="store_true", help="screen each trajectory with atif-scan"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def handle(self, *args, **options) -> None:
        paths = [Path(p) for p in options["paths"]]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise CommandError(f"no such file or directory: {', '.join(missing)}", returncode=2)
        try:
            run = ingest_run_create(paths=paths, fmt=options["format"], scan=options["scan"])
        except DatabaseError as exc:
            raise CommandError(
                f"the database is not ready ({exc}); run `python manage.py migrate` first",
                returncode=2,
            ) from None
        bar = _TqdmProgress()
        summary = ingest_run_execute(run_id=run.id, progress=bar)
        bar.close()
        assert summary is not None  # the run was created just now, nobody else holds it
        replays_enqueue(summary.trajectory_ids)
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_json()))
        else:
            self._report(summary)
        if not summary.usable:
            sys.exit(1)

    def _report(self, summary) -> None:
        by_format = ", ".join(f"{k} {v}" for k, v in summary.by_format.items() if v) or "none"
        self.stdout.write(
            f"{summary.files} files: {summary.ingested} ingested ({by_format}), "
            f"{summary.duplicates} duplicates, {len(summary.skipped)} skipped, "
            f"{len(summary.failed)} failed"
        )
        for item in summary.failed:
            line = f":{item['line']}" if item.get("line") else ""
            self.stderr.write(f"failed  {item['path']}{line}: {item['reason']}")


class _TqdmProgress:
    """Draws a bar only on a terminal and only for batches large enough to need one."""

    def __init__(self) -> None:
        self._bar = None

    def __call__(self, done: int, total: int, path: str) -> None:
        if self._bar is None:
            if total < PROGRESS_BAR_FROM or not sys.stderr.isatty():
                return
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="file", desc="ingest", file=sys.stderr)
        self._bar.update(done - self._bar.n)
        self._bar.set_postfix_str(Path(path).name[:40], refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
