"""`manage.py export_training`: write one kind of training data for a behaviour, here and now.

Prints the manifest's path. Exit 0 when written, 1 when there was nothing to export or the
policy refused (the reason on stderr), 2 on bad input (an unknown behaviour, a folder in use, a
request that contradicts itself).
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from training.core.exports.writer import MANIFEST
from training.models import Behaviour, TrainingExport
from training.services.errors import TrainingError
from training.services.exports import training_export_create, training_export_execute

EXIT_WRITTEN, EXIT_REFUSED, EXIT_BAD_INPUT = 0, 1, 2


class Command(BaseCommand):
    help = "Write a training export (SFT, OpenAI chat, DPO, KTO or RFT) for a behaviour."

    def add_arguments(self, parser) -> None:
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

    def handle(self, *args, **options) -> None:
        slug = options["behaviour"]
        behaviour = Behaviour.objects.filter(slug=slug).first()
        if behaviour is None:
            known = ", ".join(Behaviour.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(f"no behaviour {slug!r} (known: {known})", returncode=EXIT_BAD_INPUT)
        try:
            export = training_export_create(
                user=None,
                behaviour_id=behaviour.pk,
                kind=options["kind"],
                out_dir=options["out"],
                task_ids=options["task"],
            )
        except TrainingError as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
        done = training_export_execute(export_id=export.pk)
        if done is None:  # cannot happen for a row created just now, unless a worker took it
            raise CommandError(f"export {export.pk} was taken by a worker", returncode=2)
        if done.status == TrainingExport.Status.REFUSED:
            raise CommandError(f"refused: {done.refusal}", returncode=EXIT_REFUSED)
        if done.status != TrainingExport.Status.DONE:
            raise CommandError(done.error or done.status, returncode=EXIT_BAD_INPUT)
        self.stdout.write(str(Path(done.out_dir) / MANIFEST))
