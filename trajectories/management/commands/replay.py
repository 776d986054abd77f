from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.models import SourceFile, Trajectory
from trajectories.services.ingest import ingest_run_create, ingest_run_execute
from trajectories.services.replay import replay_compute
from trajectories.store import sha256_hex


class Command(BaseCommand):
    help = (
        "Replay a trajectory (by id, or a file path which is ingested first) and print its checks."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("target", help="a trajectory id or the path of a trajectory file")
        parser.add_argument(
            "--format", default="auto", help="format of a file target (default: auto)"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def handle(self, *args, **options) -> None:
        trajectory = self._resolve(options["target"], options["format"])
        if trajectory.status in (Trajectory.Status.INGESTED, Trajectory.Status.REPLAYING):
            replay_compute(trajectory_id=trajectory.id)
            trajectory.refresh_from_db()
        if trajectory.status != Trajectory.Status.REPLAYED:
            raise CommandError(
                f"trajectory {trajectory.id} could not be replayed: "
                f"{trajectory.replay_error or trajectory.status}",
                returncode=1,
            )
        replay = trajectory.replay
        out = {
            "trajectory": trajectory.id,
            "steps": trajectory.steps_count,
            "files_known": replay.files_known,
            "files_lost": replay.files_lost,
            "commands": replay.commands_count,
            "checks": [
                {k: c[k] for k in ("step", "command", "cwd", "exit_code", "kind", "language")}
                for c in replay.checks
            ],
        }
        if options["json"]:
            self.stdout.write(json.dumps(out))
            return
        self.stdout.write(
            f"trajectory {trajectory.id}: {out['steps']} steps, {out['files_known']} files known, "
            f"{out['files_lost']} lost, {out['commands']} commands, {len(out['checks'])} checks"
        )
        for c in out["checks"]:
            status = "?" if c["exit_code"] is None else c["exit_code"]
            self.stdout.write(
                f"  step {c['step']:>5}  exit {status!s:>4}  {c['kind']:<9} {c['command'][:100]}"
            )

    def _resolve(self, target: str, fmt: str) -> Trajectory:
        if target.isdigit():
            found = Trajectory.objects.filter(id=int(target)).first()
            if found is None:
                raise CommandError(f"no trajectory with id {target}", returncode=2)
            return found
        path = Path(target)
        if not path.is_file():
            raise CommandError(f"{target} is neither a trajectory id nor a file", returncode=2)
        run = ingest_run_create(paths=[path], fmt=fmt)
        summary = ingest_run_execute(run_id=run.id)
        if summary and summary.failed:
            raise CommandError(f"{target}: {summary.failed[0]['reason']}", returncode=1)
        if summary and summary.skipped:
            raise CommandError(f"{target}: {summary.skipped[0]['reason']}", returncode=1)
        sha = sha256_hex(path.read_bytes())
        source = SourceFile.objects.filter(sha256=sha).select_related("trajectory").first()
        if source is None:
            raise CommandError(f"{target} was not ingested", returncode=1)
        return source.trajectory
