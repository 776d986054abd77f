"""`manage.py export_training --kind K --behaviour SLUG --out DIR [--as USERNAME] [--json]`: write
one kind of training data for a behaviour, here and now, as the exports page does through the
workers.

Prints the manifest's path (one JSON object with --json). Exit 0 when written; 1 when there was
nothing to export, the policy refused it or the role did (the reason on stderr); 2 on a usage
error (an unknown behaviour or user, a folder in use, a request that contradicts itself).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from training.core.exports.writer import MANIFEST
from training.management.loop_commands import (
    EXIT_REFUSED,
    Done,
    LoopCommand,
    behaviour_named,
    usage_error,
)
from training.models import TrainingExport
from training.services.exports import training_export_create, training_export_execute


class Command(LoopCommand):
    help = "Write a training export (SFT, OpenAI chat, DPO, KTO or RFT) for a behaviour."

    def add_step_arguments(self, parser) -> None:
        parser.add_argument("--kind", required=True, choices=TrainingExport.Kind.values)
        parser.add_argument("--behaviour", required=True, metavar="SLUG")
        parser.add_argument(
            "--out", required=True, type=Path, metavar="DIR", help="an empty or new folder"
        )
        parser.add_argument(
            "--task",
            type=int,
            action="append",
            default=[],
            metavar="ID",
            help="only this behaviour task (repeat for more; default: every train task)",
        )

    def step(
        self, *, user, kind: str, behaviour: str, out: Path, task: list[int], **_: Any
    ) -> Done:
        export = training_export_create(
            user=user,
            behaviour_id=behaviour_named(behaviour).pk,
            kind=kind,
            out_dir=out,
            task_ids=task,
        )
        done = training_export_execute(export_id=export.pk)
        if done is None:  # cannot happen for a row created just now, unless a worker took it
            raise usage_error(f"export {export.pk} was taken by a worker")
        if done.status == TrainingExport.Status.REFUSED:
            raise CommandError(f"refused: {done.refusal}", returncode=EXIT_REFUSED)
        if done.status != TrainingExport.Status.DONE:
            raise usage_error(done.error or done.status)
        manifest = str(Path(done.out_dir) / MANIFEST)
        payload = {
            "export": done.pk,
            "kind": done.kind,
            "behaviour": behaviour,
            "out_dir": done.out_dir,
            "manifest": manifest,
            "sha256": done.sha256,
        }
        return Done(payload, manifest)
