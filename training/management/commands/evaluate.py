"""`manage.py evaluate`: score a behaviour's rollouts, or a suite written for the trainer seed.

Prints one JSON object with --json (a short summary otherwise). Exit 0 when the gate passes; 1
when it fails (a rollout or task failed, or nothing was scored); 2 on an error: bad input (the
message names what is wrong) or an eval that broke (the run is marked failed with the reason).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from groundwork.access.errors import Refused
from training.core.suite import (
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_GATE_PASSED,
    evaluate_suite_file,
)
from training.models import Behaviour, EvalRun
from training.services.evals import eval_run_create, eval_run_execute

EXIT_ERROR = EXIT_BAD_INPUT  # bad input and a broken eval: both are not the gate's verdict


class Command(BaseCommand):
    help = "Score a behaviour's graded rollouts (--behaviour) or a trainer-seed suite (--suite)."

    def add_arguments(self, parser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--behaviour", metavar="SLUG", help="a behaviour's slug")
        which.add_argument("--suite", metavar="FILE", type=Path, help="a suite JSON file")
        parser.add_argument("--agent", default="", help="only this agent's rollouts")
        parser.add_argument(
            "--spec-version", type=int, help="the behaviour version (default: latest)"
        )
        parser.add_argument("-k", type=int, default=1, help="k for pass@k (default 1)")
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def handle(self, *args, **options) -> None:
        if options["suite"]:
            code, payload = evaluate_suite_file(options["suite"])
        else:
            code, payload = self._behaviour(options)
        self._print(payload, as_json=options["json"])
        if code != EXIT_GATE_PASSED:
            # CommandError prints its message; the payload is already out, so keep it short.
            raise CommandError(_reason(code, payload), returncode=code)

    def _behaviour(self, options: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        slug = options["behaviour"]
        behaviour = Behaviour.objects.filter(slug=slug).first()
        if behaviour is None:
            known = ", ".join(Behaviour.objects.values_list("slug", flat=True)) or "none"
            return EXIT_BAD_INPUT, {"error": f"no behaviour {slug!r} (known: {known})"}
        try:
            run = eval_run_create(
                user=None,
                behaviour_id=behaviour.pk,
                version_number=options["spec_version"],
                agent=options["agent"],
                k=options["k"],
            )
        except Refused as error:
            return EXIT_BAD_INPUT, {"error": str(error)}
        try:
            done = eval_run_execute(run_id=run.pk)
        except Exception:
            # The service marked the run failed with the reason; a gate that failed exits 1.
            error = EvalRun.objects.values_list("error", flat=True).get(pk=run.pk)
            return EXIT_ERROR, {"error": f"eval run {run.pk} failed: {error}", "eval_run": run.pk}
        if done is None:  # cannot happen for a run created just now, unless a worker took it
            return EXIT_BAD_INPUT, {"error": f"eval run {run.pk} was taken by another worker"}
        summary = {"eval_run": done.pk, **done.summary}
        return (EXIT_GATE_PASSED if summary["gate_passed"] else EXIT_GATE_FAILED), summary

    def _print(self, payload: dict[str, Any], *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(payload, sort_keys=True))
            return
        if "error" in payload:
            return  # the CommandError says it
        summary = payload.get("summary", payload)
        for key in ("taskCount", "rollouts", "passed", "failed", "averageReward", "average_reward"):
            if key in summary:
                self.stdout.write(f"{key}: {summary[key]}")
        for warning in summary.get("warnings", []):
            self.stdout.write(f"warning: {warning}", self.style.WARNING)


def _reason(code: int, payload: dict[str, Any]) -> str:
    if code == EXIT_ERROR:
        problems = "".join(f"\n  {p}" for p in payload.get("problems", []))
        return f"{payload.get('error', 'bad input')}{problems}"
    if code == EXIT_GATE_FAILED:
        return "the eval gate failed"
    return f"exit {code}"
