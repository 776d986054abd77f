from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.db import DatabaseError

from tasks_review.core.clones import clone_line
from tasks_review.core.config import ConfigError, load_config
from tasks_review.core.dropsides import sides_line
from tasks_review.core.families import needs_llm
from tasks_review.selectors import runs
from tasks_review.selectors.pipeline_runs import pipeline_exit_code
from tasks_review.services.images import NoBaseImage, base_image_ref
from tasks_review.services.pipeline import (
    StageProgress,
    pipeline_run_create,
    pipeline_run_execute,
)
from trajectories.management.terminal import Unstyled

# What each stage counts through, for its bar.
UNITS = {"ingest": "file", "replay": "trajectory", "mine": "trajectory"}
SHOWN = ("trajectories", "candidates", "dropped", "written", "kept", "ungraded")


class Command(BaseCommand):
    help = (
        "Run the trajectory_to_env pipeline from a config file and write Harbor tasks and "
        "report.json. Exit 0 when tasks were written, 1 when nothing usable, 2 on a setup error."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--config", required=True, type=Path, help="the YAML config")
        parser.add_argument("--out", type=Path, help="destination folder (overrides output)")
        parser.add_argument(
            "--json", action="store_true", help="print report.json's summary on stdout"
        )

    def handle(self, *args, **options) -> None:
        try:
            config = load_config(options["config"])
        except ConfigError as exc:
            raise CommandError(f"bad config: {exc}", returncode=2) from None
        if options["out"]:
            output = dataclasses.replace(config.output, destination=options["out"].resolve())
            config = dataclasses.replace(config, output=output)
        self._check_llm(config.pipeline.options.families)
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
        if not options["json"]:
            self.stderr.write(f"pipeline run {run.id}: {config.source.path}")
        bars = _StageBars(self.stderr, quiet=options["json"])
        try:
            run = pipeline_run_execute(run_id=run.id, progress=bars)
        finally:
            bars.close()
        assert run is not None  # created just now, nobody else holds it
        if options["json"]:
            self.stdout.write(json.dumps((run.report or {}).get("summary", {})))
        else:
            self._report(run)
        if run.error:
            self.stderr.write(run.error)
        sys.exit(pipeline_exit_code(run))

    def _check_llm(self, families: tuple[str, ...]) -> None:
        """Say at start that the LLM families cannot run without a model; exit 2 when nothing
        else was asked for."""
        asking = needs_llm(families)
        if not asking or settings.TRAJ2ENV["LLM_MODEL"]:
            return
        names = ", ".join(asking)
        if len(asking) == len(families):
            raise CommandError(
                f"families {names} need an LLM and TRAJ2ENV_LLM_MODEL is not set "
                "(any LiteLLM model string; TRAJ2ENV_LLM_API_BASE for a local server)",
                returncode=2,
            )
        self.stderr.write(
            f"warning: TRAJ2ENV_LLM_MODEL is not set: {names} will not run "
            "(report.json lists them under skipped_families)"
        )

    def _report(self, run) -> None:
        counts = run.counts
        self.stdout.write(
            f"run {run.id} {run.status}: {counts['trajectories']} trajectories, "
            f"{counts['candidates']} candidates, {counts['dropped']} dropped, "
            f"{counts['written']} written, {counts['kept']} kept → {run.destination}/report.json"
        )
        if counts.get("reused"):
            self.stdout.write(
                f"{counts['reused']} found again by content key: the candidates an earlier run "
                "made, reused with their verdicts (no new copies)"
            )
        summary = (run.report or {}).get("summary", {})
        if summary.get("drops"):
            for line in sides_line(summary["drops"]):
                self.stdout.write(line)
        clones = summary.get("clones") or {}
        if clones.get("matched"):
            self.stdout.write(f"clones: {clone_line(clones)}")
        ungraded = runs.ungraded(run)
        if ungraded.count:
            self.stdout.write(f"{ungraded.count} ungraded, by reason:")
            for r in ungraded.reasons:
                self.stdout.write(f"  {r.count} × {r.reason}")


class _StageBars:
    """A tqdm bar per stage on a terminal: items done of the stage's, the run's counts so far
    and the elapsed time. Silent with ``--json`` and when stderr is not a terminal."""

    def __init__(self, stderr: OutputWrapper, *, quiet: bool) -> None:
        self._stderr = stderr
        self._shown = not quiet and stderr.isatty()
        self._bar: Any = None
        self._stage = ""

    def __call__(self, event: StageProgress) -> None:
        if not self._shown:
            return
        if self._bar is None or event.stage != self._stage:
            from tqdm import tqdm

            self.close()
            self._stage = event.stage
            # Opened on the stage's first event, so the elapsed time is the stage's.
            self._bar = tqdm(
                total=event.total or None,
                unit=UNITS.get(event.stage, "candidate"),
                desc=f"{event.stage:<7}",
                file=Unstyled(self._stderr),
                dynamic_ncols=True,
            )
        self._bar.total = event.total or None
        self._bar.set_postfix_str(
            ", ".join(f"{event.counts.get(k, 0)} {k}" for k in SHOWN if k in event.counts),
            refresh=False,
        )
        self._bar.update(event.done - self._bar.n)
        if event.finished:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
