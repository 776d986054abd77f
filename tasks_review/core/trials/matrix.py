"""Run a task's trial matrix: the oracle, the no-op and every tampering control.

    prepared = prepare(task_dir, engine)                # image.py: build once (cached)
    baseline = check_in_image(prepared, engine=engine, run_id=run_id)  # baseline.py, or a drop
    result = run_matrix(prepared, engine=engine, run_id=run_id, baseline=baseline)
    result.kept, result.trials                          # every trial is a TrialRecord

Every trial is two containers of the candidate's image, one after the other, run by the one
trial loop (``runner``) with the mined task's own parts (``trial.MinedTrial``): the agent's (the
oracle's solve.sh, nothing for the no-op, or a control's tampering), stopped and copied out,
then the separate verifier's (``verifier``). Containers carry the run id label
and are removed when their block ends, on errors and KeyboardInterrupt too; ``Engine.cleanup``
finds what a killed process left. Docker failing under a trial makes it *ungraded* (reward None),
never 0 or 1. A candidate is kept only when the oracle scored exactly 1.0 on every repeat,
the no-op 0 and every applicable control 0 (for build and extend, whose reward is a share of
their tests, a control scoring any share above 0 rejects the task). The controls are the
catalogue and the task family's own (``controls.catalogue_for``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from groundwork.core.docker import Engine, InfraError
from groundwork.core.failures import said

from ..pool import run_each
from .baseline import Baseline, check_in_image
from .controls import Control, catalogue_for
from .deps import OfflineSources
from .image import PreparedTask, prepare
from .model import MatrixResult, MatrixStatus, TrialDrop, TrialRecord
from .probeset import ProbeSet, record_grading, record_probes
from .runner import TRIAL_JOBS, kill_own_containers, run_trials
from .taskdir import record_reference
from .trial import MinedTrial


def run_matrix(
    prepared: PreparedTask,
    *,
    repeats: int = 3,
    controls: Sequence[Control] | None = None,
    engine: Engine,
    run_id: str,
    baseline: Baseline | TrialDrop | None = None,
    naive: bool = False,
    cancel: threading.Event | None = None,
    progress: Callable[[TrialRecord], None] | None = None,
    trial_jobs: int = TRIAL_JOBS,
) -> MatrixResult:
    """Oracle x ``repeats``, the no-op and every control, in the candidate's own image,
    ``trial_jobs`` trials at a time; the result lists them in that order.

    Without ``baseline`` the check in the image runs first (and may drop the candidate).
    ``naive`` also runs each control's check where the agent left it, trusting its exit
    status, to record whether the control would fool such a grader (evidence, not a verdict).
    """
    started = time.monotonic()
    spec = prepared.spec
    common: dict[str, Any] = {
        "task_dir": str(spec.task_dir),
        "image": prepared.image.image_id if prepared.image else None,
        "build_seconds": prepared.image.seconds if prepared.image else 0.0,
    }
    if prepared.drop is not None:
        return MatrixResult(status=MatrixStatus.DROPPED, drop=prepared.drop, **common)
    if baseline is None:
        try:
            baseline = check_in_image(prepared, engine=engine, run_id=run_id)
        except InfraError as exc:
            return MatrixResult(
                status=MatrixStatus.UNGRADED,
                reasons=(f"the check in the image could not run: {exc.message}",),
                wall_seconds=time.monotonic() - started,
                **common,
            )
    if isinstance(baseline, TrialDrop):
        return MatrixResult(
            status=MatrixStatus.DROPPED,
            drop=baseline,
            wall_seconds=time.monotonic() - started,
            **common,
        )
    record_reference(spec.task_dir, baseline.facts)
    record_probes(spec.task_dir, baseline.facts.probes)
    record_grading(spec.task_dir, baseline.facts.probes)
    ran = run_trials(
        MinedTrial(prepared, baseline, naive=naive),
        controls=catalogue_for(spec.family) if controls is None else controls,
        engine=engine,
        run_id=run_id,
        repeats=repeats,
        cancel=cancel,
        progress=progress,
        trial_jobs=trial_jobs,
    )
    return MatrixResult(
        status=ran.status,
        trials=ran.trials,
        reasons=ran.reasons,
        check_seconds=baseline.seconds,
        wall_seconds=time.monotonic() - started,
        check=baseline.size.to_dict(),
        grading=(baseline.facts.probes or ProbeSet.none("")).summary(),
        **common,
    )


def run_matrices(
    prepared: Sequence[PreparedTask],
    *,
    jobs: int,
    engine: Engine,
    run_id: str,
    **options: Any,
) -> list[MatrixResult]:
    """``run_matrix`` for several candidates, ``jobs`` at a time (``run_each``'s threads).

    On KeyboardInterrupt the running matrices stop after their current trial, whose
    containers are killed, and the interrupt is raised again. A matrix that raises is
    ungraded (a harness error is no verdict on the task) and the others still run.
    """
    try:
        outcomes = run_each(
            prepared,
            lambda task, stop: run_matrix(
                task, engine=engine, run_id=run_id, cancel=stop, **options
            ),
            jobs=jobs,
            on_cancel=lambda: kill_own_containers(engine, run_id),
            name="trials",
        )
    except BaseException:
        # run_each waited for its lanes: a container whose lane's own removal failed (the engine
        # slow under load, the error suppressed) goes now, so nothing of the run is left.
        kill_own_containers(engine, run_id, remove=True)
        raise
    return [_harness_error(o.item, o.error) if o.error else o.result() for o in outcomes]


def _harness_error(task: PreparedTask, error: Exception) -> MatrixResult:
    return MatrixResult(
        task_dir=str(task.spec.task_dir),
        status=MatrixStatus.UNGRADED,
        reasons=(f"harness error: {said(error)}",),
    )


def verify_task(
    task_dir: Path | str,
    *,
    run_id: str,
    engine: Engine | None = None,
    sources: OfflineSources = OfflineSources(),  # noqa: B008 - frozen, so one shared default is safe
    **options: Any,
) -> MatrixResult:
    """Prepare, check in the image and run the matrix; Docker failures end ungraded."""
    started = time.monotonic()
    try:
        engine = engine or Engine.from_env()
        prepared = prepare(task_dir, engine, sources=sources, run_id=run_id)
    except InfraError as exc:
        log = f"\n{exc.log[-2000:]}" if exc.log else ""
        return MatrixResult(
            task_dir=str(task_dir),
            status=MatrixStatus.UNGRADED,
            reasons=(f"{exc.message}{log}",),
            wall_seconds=time.monotonic() - started,
        )
    return run_matrix(prepared, engine=engine, run_id=run_id, **options)
