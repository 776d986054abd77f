"""`manage.py rollouts_import JOBS_DIR`: read a `harbor run` jobs folder into rollouts and grade
them, here and now, for users without a worker (the rollouts page queues the same two steps).

Prints counts (one JSON object with --json). Exit 0 when something was imported, 1 when nothing
was (every trial skipped, or no trial at all), 2 on bad input (the message names it).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from groundwork.access.errors import Refused
from training.services.rollouts import (
    rollout_import_create,
    rollout_import_execute,
    rollouts_pending_by_task,
    rollouts_regrade,
)

EXIT_IMPORTED, EXIT_NOTHING, EXIT_BAD_INPUT = 0, 1, 2


class Command(BaseCommand):
    help = "Import a `harbor run` jobs folder as rollouts and re-grade them in Docker."

    def add_arguments(self, parser) -> None:
        parser.add_argument("jobs_dir", metavar="JOBS_DIR", help="the folder `harbor run -o` wrote")
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def handle(self, *args, **options) -> None:
        code, payload = self._run(options["jobs_dir"])
        self._print(payload, as_json=options["json"])
        if code != EXIT_IMPORTED:
            reason = payload.get("error") or "nothing imported: no trial ran a kept task here"
            raise CommandError(reason, returncode=code)

    def _run(self, jobs_dir: str) -> tuple[int, dict[str, Any]]:
        try:
            row = rollout_import_create(user=None, path=jobs_dir)
        except Refused as error:
            return EXIT_BAD_INPUT, {"error": str(error)}
        done = rollout_import_execute(import_id=row.pk)
        if done is None:  # only a worker that took the row first could cause this
            return EXIT_BAD_INPUT, {"error": f"import {row.pk} was taken by another worker"}
        ids: list[int] = list(done.summary.get("rollouts") or [])
        grades = {"graded": 0, "ungraded": 0, "not_claimed": 0}
        for candidate_id, pending in rollouts_pending_by_task(ids).items():
            counts = rollouts_regrade(candidate_id=candidate_id, rollout_ids=pending)
            for key, value in counts.items():
                grades[key] = grades.get(key, 0) + value
        payload = {
            "import": done.pk,
            "path": done.path,
            "trials": done.summary.get("trials", 0),
            "rollouts": ids,
            "imported": len(ids),
            "skipped": done.summary.get("skipped") or [],
            **grades,
        }
        return (EXIT_IMPORTED if ids else EXIT_NOTHING), payload

    def _print(self, payload: dict[str, Any], *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(payload, sort_keys=True))
            return
        if "error" in payload:
            return  # the CommandError says it
        self.stdout.write(
            f"import {payload['import']}: {payload['trials']} trial(s), "
            f"{payload['imported']} imported, {len(payload['skipped'])} skipped; "
            f"{payload['graded']} graded, {payload['ungraded']} ungraded"
        )
        for s in payload["skipped"]:
            line = f"skipped {s.get('trial')}: {s.get('reason')} ({s.get('detail')})"
            self.stdout.write(line, self.style.WARNING)
