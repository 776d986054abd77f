"""Pipeline runs, candidates, trials and task folders for review-desk tests, made directly."""

from __future__ import annotations

import itertools
from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from groundwork.models import AuditEvent
from tasks_review.models import Candidate, PipelineRun, Review, TrialRun
from tests.trajectories.factories import make_trajectory
from trajectories.store import blob_put

_seq = itertools.count(1)

START = {
    "src/invoice.py": b"def total(xs):\n    return sum(xs[1:])\n",
    "tests/test_invoice.py": b"from src.invoice import total\n\n\ndef test_total():\n"
    b"    assert total([1, 2, 3]) == 6\n",
    "README.md": b"# invoices\n",
}
FIX = {"src/invoice.py": b"def total(xs):\n    return sum(xs)\n"}
INSTRUCTION = "The invoice total is off by one item.\n\nMake `pytest tests/` pass."


def files(contents: dict[str, bytes]) -> dict[str, str]:
    """path -> sha256, with each content stored as a Blob."""
    return {path: blob_put(data).sha256 for path, data in contents.items()}


def make_run() -> PipelineRun:
    return PipelineRun.objects.create(config={}, destination="x")


def make_candidate(
    *,
    run: PipelineRun | None = None,
    trajectory=None,
    start: dict[str, bytes] | None = None,
    fix: dict[str, bytes | None] | None = None,
    trials: bool = True,
    **fields,
) -> Candidate:
    """A kept repair candidate; `fix` overrides start files (None deletes one)."""
    n = next(_seq)
    start = START if start is None else start
    reference = dict(start)
    for path, data in (FIX if fix is None else fix).items():
        if data is None:
            reference.pop(path, None)
        else:
            reference[path] = data
    defaults = dict(
        family="repair",
        key=f"key-{n}",
        status=Candidate.Status.KEPT,
        language="python",
        runner="pytest",
        check_command="pytest tests/",
        fail_step=2,
        pass_step=5,
        instruction=INSTRUCTION,
        task_name=f"repair-invoice-{n}",
        start_files=files(start),
        reference_files=files(reference),
    )
    defaults.update(fields)
    if defaults["status"] == Candidate.Status.KEPT and defaults["family"] != Candidate.AUTHORED:
        # As verifier v3 keeps a task whose probes discriminate.
        defaults.setdefault("grading", Candidate.Grading.EQUIVALENCE)
    candidate = Candidate.objects.create(
        run=run or make_run(), trajectory=trajectory or make_trajectory(), **defaults
    )
    if trials:
        make_trials(candidate)
    return candidate


def make_trials(candidate: Candidate, *, repeats: int = 2, controls=("forged_reward",)) -> None:
    now = timezone.now()
    rows = []
    for role, expected in [("oracle", 1.0), ("noop", 0.0), *((c, 0.0) for c in controls)]:
        for repeat in range(repeats):
            rows.append(
                TrialRun(
                    candidate=candidate,
                    role=role,
                    repeat=repeat,
                    status=TrialRun.Status.GRADED,
                    reward=expected,
                    expected=expected,
                    started_at=now - timedelta(seconds=20),
                    finished_at=now,
                    duration_ms=12_300 + repeat,
                    logs=f"== {role} #{repeat} ==\n1 passed in 0.02s\n",
                )
            )
    TrialRun.objects.bulk_create(rows)


def make_review(candidate: Candidate, reviewer, decision: str, reason: str = "", **fields):
    reason = reason or ("good" if decision == "accept" else "too_easy")
    return Review.objects.create(
        candidate=candidate, reviewer=reviewer, decision=decision, reason=reason, **fields
    )


def make_task_dir(root: Path, name: str) -> Path:
    """A Harbor task folder with an executable test script and a nested solution."""
    task = root / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "instruction.md").write_text(INSTRUCTION + "\n")
    (task / "task.toml").write_text('version = "1.0"\n[metadata]\nfamily = "repair"\n')
    (task / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\n")
    test = task / "tests" / "test.sh"
    test.write_text("#!/bin/sh\npytest tests/\n")
    test.chmod(0o755)
    solve = task / "solution" / "solve.sh"
    solve.write_text("#!/bin/sh\ncp -r /solution/files/. /app/\n")
    solve.chmod(0o750)
    return task


def audit_events(verb: str, candidate: Candidate | None = None) -> list[AuditEvent]:
    """The audit rows of one verb, oldest first, about `candidate` when given."""
    qs = AuditEvent.objects.filter(verb=verb).order_by("id")
    if candidate is not None:
        qs = qs.filter(target_type="candidate", target_id=str(candidate.pk))
    return list(qs)
