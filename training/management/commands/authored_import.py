"""`manage.py authored_import TASK_DIR [--behaviour SLUG] [--json]`: import a Harbor task folder
as an authored task and run its trial matrix here and now (the behaviour page queues the same job).

Prints the verdict and every trial (one JSON object with --json). Exit 0 when the task is kept
(and, with --behaviour, added to it), 1 when the matrix rejects it, 2 on bad input (a folder
that is no authored task, an unknown behaviour, images this engine lacks) or a setup error
(no Docker engine, or Docker failing under the trials: ungraded).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from groundwork.access.errors import Refused
from groundwork.core.docker import Engine, InfraError
from training.core.authored import AuthoredTaskInvalid, read_authored_task
from training.models import AuthoredTask, Behaviour, BehaviourTask
from training.services.authored import TaskFolderInvalid, authored_task_import, authored_task_verify

EXIT_KEPT, EXIT_REJECTED, EXIT_BAD_INPUT = 0, 1, 2


class Command(BaseCommand):
    help = "Import a Harbor task folder as an authored task and verify it in Docker."

    def add_arguments(self, parser) -> None:
        parser.add_argument("task_dir", metavar="TASK_DIR", help="a Harbor task folder")
        parser.add_argument("--behaviour", metavar="SLUG", help="the behaviour it is for")
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def handle(self, *args, **options) -> None:
        code, payload = self._run(options["task_dir"], options["behaviour"])
        self._print(payload, as_json=options["json"])
        if code != EXIT_KEPT:
            reason = payload.get("error") or f"not kept: {payload.get('status')}"
            raise CommandError(reason, returncode=code)

    def _run(self, task_dir: str, slug: str | None) -> tuple[int, dict[str, Any]]:
        behaviour = None
        if slug:
            behaviour = Behaviour.objects.filter(slug=slug).first()
            if behaviour is None:
                known = ", ".join(Behaviour.objects.values_list("slug", flat=True)) or "none"
                return EXIT_BAD_INPUT, {"error": f"no behaviour {slug!r} (known: {known})"}
        try:
            engine = Engine.from_env()
        except InfraError as exc:
            # Bad input first, when the folder says so without Docker; else the setup error.
            try:
                read_authored_task(task_dir)
            except AuthoredTaskInvalid as invalid:
                return EXIT_BAD_INPUT, _invalid(task_dir, invalid.problems)
            return EXIT_BAD_INPUT, {"error": f"setup error: {exc.message}"}
        try:
            row = authored_task_import(
                user=None,
                path=task_dir,
                behaviour_id=behaviour.pk if behaviour else None,
                engine=engine,
            )
        except TaskFolderInvalid as invalid:
            return EXIT_BAD_INPUT, _invalid(task_dir, invalid.problems)
        except Refused as error:
            return EXIT_BAD_INPUT, {"error": str(error)}
        done = authored_task_verify(task_id=row.pk, engine=engine)
        if done is None:  # only a worker that took the row first could cause this
            return EXIT_BAD_INPUT, {"error": f"authored task {row.pk} was taken by a worker"}
        payload = _payload(done)
        code = {AuthoredTask.Status.KEPT: EXIT_KEPT, AuthoredTask.Status.REJECTED: EXIT_REJECTED}
        status = code.get(AuthoredTask.Status(done.status), EXIT_BAD_INPUT)
        if payload["problems"]:  # rejected before any trial: the folder, not the matrix
            status = EXIT_BAD_INPUT
        return status, payload

    def _print(self, payload: dict[str, Any], *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(payload, sort_keys=True))
            return
        for problem in payload.get("problems") or []:
            self.stdout.write(f"problem: {problem}", self.style.WARNING)
        if "error" in payload:
            return  # the CommandError says it
        self.stdout.write(
            f"authored task {payload['authored_task']} ({payload['name']}): {payload['status']}"
        )
        for trial in payload["trials"]:
            mark = "ok  " if trial["as_expected"] else "--  "
            self.stdout.write(
                f"{mark}{trial['name']}#{trial['repeat']}: {trial['status']} "
                f"{trial['reward']} (must be {trial['expected']})"
            )
        for reason in payload["reasons"]:
            self.stdout.write(f"reason: {reason}", self.style.WARNING)


def _invalid(task_dir: str, problems: tuple[str, ...]) -> dict[str, Any]:
    return {"error": f"{task_dir} is not an authored task", "problems": list(problems)}


def _payload(row: AuthoredTask) -> dict[str, Any]:
    evidence = row.evidence or {}
    behaviour_task = None
    if row.candidate_id and row.behaviour_id:
        tasks = BehaviourTask.objects.filter(candidate=row.candidate_id, behaviour=row.behaviour_id)
        behaviour_task = tasks.values("id", "split").first()
    return {
        "authored_task": row.pk,
        "name": row.name,
        "status": row.status,
        "kept": row.status == AuthoredTask.Status.KEPT,
        "candidate": row.candidate_id,
        "behaviour_task": behaviour_task,
        "task_dir": row.task_dir,
        "reasons": list(row.reasons),
        "problems": list(evidence.get("problems") or []),
        "won": list(evidence.get("won") or []),
        "trials": [
            {
                "name": t["name"],
                "repeat": t["repeat"],
                "status": t["status"],
                "reward": t["reward"],
                "expected": t["expected"],
                "as_expected": t["status"] == "graded" and t["reward"] == t["expected"],
                "seconds": t["seconds"],
            }
            for t in evidence.get("trials") or []
        ],
    }
