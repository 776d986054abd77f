"""The check in the image: it must fail on the starting files and pass on the reference.

    baseline = check_in_image(prepared, engine=engine, run_id=run_id)   # or a TrialDrop
    baseline.facts     # what grading needs: passing tests, failing ones, control candidates

Both sides go through the task's own grader in fresh verifier containers (``verifier``), with
no reference facts yet: the copies the grader makes of every test show which can serve as
controls in the trials.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from groundwork.core.docker import Engine, InfraError

from .assertions import CheckSize, check_size
from .image import PreparedTask
from .kit import probing
from .model import ORACLE_REWARD, TrialDrop, TrialDropReason, trim
from .plan import GradingPlan, plan_check
from .probes import probes_in_image
from .probeset import PROBES_FILE, ProbeSet
from .results import Judgement
from .taskdir import ReferenceFacts, TaskSpec
from .verifier import (
    SOLUTION_DIR,
    Graded,
    Submission,
    grade_submission,
    list_entries,
    put_solution,
    take_submission,
)


@dataclass(frozen=True, slots=True)
class Baseline:
    """The check inside the image: failing on the start, passing on the reference."""

    plan: GradingPlan
    facts: ReferenceFacts  # what grading needs: passing tests, failing ones, control candidates
    start: Judgement
    reference: Judgement
    seconds: float
    logs: str = ""
    size: CheckSize = CheckSize(0, 0, 0)  # how much the check asserts

    @property
    def reference_passed(self) -> Mapping[str, int]:
        return self.facts.passed


def check_in_image(prepared: PreparedTask, *, engine: Engine, run_id: str) -> Baseline | TrialDrop:
    """Grade the starting files, apply solve.sh, grade the reference files.

    Both go through the task's own grader in fresh verifier containers, with no reference facts
    yet: the copies the grader makes of every test show which can serve as controls. Drops with
    ``check_not_failing_at_start`` or ``check_not_passing_at_reference``; InfraError when
    Docker fails.
    """
    if prepared.image is None:
        raise ValueError("the task was dropped before its image was built")
    spec = prepared.spec
    started = time.monotonic()
    image = prepared.image.image_id

    def graded(submission: Submission, plan: GradingPlan) -> Graded:
        return grade_submission(
            engine,
            spec,
            image,
            submission,
            facts=None,
            plan=plan,
            run_id=run_id,
            limits=prepared.limits,
        )

    at_start = graded(
        Submission(files=dict(spec.start_files)),
        plan_check(spec.command, spec.workdir_rel, spec.start_bytes()),
    )
    with engine.sandbox(image, run_id=run_id, limits=prepared.limits) as box:
        put_solution(box, spec)
        solved = box.exec(["bash", f"{SOLUTION_DIR}/solve.sh"], workdir=spec.project_dir)
        names = list_entries(box, spec.project_dir) if box.alive else []
        if box.alive:
            box.stop()
        reference = take_submission(box, spec.project_dir, names)
    if reference.problem:
        raise InfraError(f"copying the reference files out failed: {reference.problem}")
    ref_bytes = {p: e.data for p, e in reference.files.items()}
    plan = plan_check(spec.command, spec.workdir_rel, ref_bytes)
    at_ref = graded(reference, plan)
    logs = trim(
        f"-- starting files\n{at_start.logs}\n"
        f"-- solve.sh (exit {solved.exit_code})\n{solved.stdout}{solved.stderr}\n"
        f"-- reference files\n{at_ref.logs}"
    )
    if not solved.ok:
        return TrialDrop(
            TrialDropReason.CHECK_NOT_PASSING_AT_REFERENCE,
            f"solution/solve.sh exited with status {solved.exit_code}",
            "check",
            logs,
        )
    if at_start.verdict.reward == ORACLE_REWARD:
        return TrialDrop(
            TrialDropReason.CHECK_NOT_FAILING_AT_START,
            f"the check passes on the starting files inside the image ({plan.mode} grading)",
            "check",
            logs,
        )
    if at_ref.verdict.reward != ORACLE_REWARD:
        return TrialDrop(
            TrialDropReason.CHECK_NOT_PASSING_AT_REFERENCE,
            "; ".join(at_ref.verdict.reasons[:3]),
            "check",
            logs,
        )
    passed = dict(at_ref.verdict.passed)
    facts = ReferenceFacts(
        passed=passed,
        start_failed=tuple(sorted(set(passed) - set(at_start.verdict.passed))),
        controls={k: tuple(v) for k, v in at_ref.verdict.controls.items()},
    )
    if spec.family != "qa":  # an answer file is its own hidden input
        probes = stored_probes(spec)
        if probes is None:
            probes = _probes(prepared, reference, engine, run_id)
        facts = replace(facts, probes=probes)
    return Baseline(
        plan=plan,
        facts=facts,
        start=at_start.verdict,
        reference=at_ref.verdict,
        seconds=time.monotonic() - started,
        logs=logs,
        size=check_size(ref_bytes, len(passed)),
    )


def stored_probes(spec: TaskSpec) -> ProbeSet | None:
    """The probes a kept task was graded with (``tests/probes.json``, or none when grading.json
    records that it was kept check-only); None for a task never kept, whose probes are drawn.

    Grading a kept task again (a rollout re-graded, the check run once more) uses these, never
    a new draw: the rewards of one task then all come from the same hidden inputs, and a draw
    that happens to find no discriminating input cannot turn an equivalence-graded task into
    a check-only one. TaskFolderError when the file is not the one grading.json records."""
    try:
        recorded = json.loads(spec.tests_files["grading.json"].data).get("probes")
    except (KeyError, ValueError):
        recorded = None
    stored = spec.tests_files.get(PROBES_FILE)
    if stored is None:
        if isinstance(recorded, dict) and recorded.get("count") == 0:
            return ProbeSet.none("kept check-only: no probe was recorded for this task")
        return None
    if isinstance(recorded, dict) and probing.record(stored.data) != recorded:
        raise InfraError(
            f"{spec.task_dir}/tests/{PROBES_FILE} is not the one tests/grading.json records"
        )
    try:
        return ProbeSet.from_json(json.loads(stored.data))
    except (ValueError, AttributeError) as exc:
        raise InfraError(f"{spec.task_dir}/tests/{PROBES_FILE}: {exc}") from None


def _probes(prepared: PreparedTask, reference: Submission, engine: Engine, run_id: str) -> ProbeSet:
    """The task's hidden equivalence probes; none (check-only) when they cannot be made."""
    try:
        guarded = json.loads(prepared.spec.tests_files["grading.json"].data).get("reference")
    except (KeyError, ValueError):
        guarded = None
    try:
        return probes_in_image(
            prepared,
            reference.files,
            engine=engine,
            run_id=run_id,
            test_paths=sorted(guarded or ()),
        )
    except InfraError as exc:
        return ProbeSet.none(f"the probes could not be made in the image: {exc.message}")
