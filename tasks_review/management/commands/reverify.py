from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from tasks_review.core.trials.version import VERIFIER_VERSION
from tasks_review.services.images import NoBaseImage, base_image_ref
from tasks_review.services.reverify import candidates_reverify, stale_kept


class Command(BaseCommand):
    help = (
        f"Verify again the kept tasks an older grader kept (verifier version < {VERIFIER_VERSION})"
        ": each task's grader is written anew and its trial matrix run again."
    )

    def add_arguments(self, parser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--run", type=int, help="only the kept tasks of this pipeline run")
        which.add_argument("--all-stale", action="store_true", help="every stale kept task")
        parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")

    def handle(self, *args, **options) -> None:
        run_id = options["run"]
        if not stale_kept(run_id=run_id).exists():
            self._show([], options["json"])
            return
        try:
            base_image = base_image_ref()
        except NoBaseImage as exc:
            raise CommandError(str(exc), returncode=2) from None
        done = candidates_reverify(run_id=run_id, base_image=base_image)
        self._show(done, options["json"])

    def _show(self, done, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps([d.to_dict() for d in done], indent=1))
            return
        if not done:
            self.stdout.write(
                f"no stale kept task (every kept task is at version {VERIFIER_VERSION})"
            )
        for d in done:
            self.stdout.write(
                f"candidate {d.candidate_id}: kept by version {d.before or 1} -> {d.status}"
                + (f" (version {d.after})" if d.after else "")
            )
