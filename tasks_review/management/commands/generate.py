from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from tasks_review.core.config import ConfigError, load_config
from tasks_review.selectors import runs
from tasks_review.services.images import NoBaseImage, base_image_ref
from tasks_review.services.pipeline import (
    pipeline_exit_code,
    pipeline_run_create,
    pipeline_run_execute,
)


class Command(BaseCommand):
    help = (
        "Run the trajectory_to_env pipeline from a config file and write Harbor tasks and "
        "report.json. Exit 0 when tasks were written, 1 when nothing usable, 2 on a setup error."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--config", required=True, type=Path, help="the YAML config")
        parser.add_argument("--out", type=Path, help="destination folder (overrides output)")

    def handle(self, *args, **options) -> None:
        try:
            config = load_config(options["config"])
        except ConfigError as exc:
            raise CommandError(f"bad config: {exc}", returncode=2) from None
        if options["out"]:
            output = dataclasses.replace(config.output, destination=options["out"].resolve())
            config = dataclasses.replace(config, output=output)
        if not config.source.path.exists():
            raise CommandError(f"source.path does not exist: {config.source.path}", returncode=2)
        if not config.pipeline.options.propose_only:
            try:
                base_image_ref()  # builds the base image offline when it is missing
            except NoBaseImage as exc:
                raise CommandError(str(exc), returncode=2) from None
        try:
            run = pipeline_run_create(config=config, config_path=str(options["config"]))
        except DatabaseError as exc:
            raise CommandError(
                f"the database is not ready ({exc}); run `python manage.py migrate` first",
                returncode=2,
            ) from None
        self.stderr.write(f"pipeline run {run.id}: {config.source.path}")
        last = [""]

        def show(row) -> None:
            line = f"  {row.stage:<7} {row.stage_done}/{row.stage_total or '?'}"
            if line != last[0] and sys.stderr.isatty():
                self.stderr.write(line)
                last[0] = line

        run = pipeline_run_execute(run_id=run.id, progress=show)
        assert run is not None  # created just now, nobody else holds it
        counts = run.counts
        self.stdout.write(
            f"run {run.id} {run.status}: {counts['trajectories']} trajectories, "
            f"{counts['candidates']} candidates, {counts['dropped']} dropped, "
            f"{counts['written']} written, {counts['kept']} kept → {run.destination}/report.json"
        )
        ungraded = runs.ungraded(run)
        if ungraded.count:
            self.stdout.write(f"{ungraded.count} ungraded, by reason:")
            for r in ungraded.reasons:
                self.stdout.write(f"  {r.count} × {r.reason}")
        if run.error:
            self.stderr.write(run.error)
        sys.exit(pipeline_exit_code(run))
