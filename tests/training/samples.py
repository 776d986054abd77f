"""A bundled sample's repair as a kept task with the trajectory it was mined from: what the
replay agent's tests replay (the session ingested, the task written from its candidate)."""

from __future__ import annotations

from pathlib import Path

from tasks_review.core.taskfiles import SourceTrace, write_task
from tasks_review.models import Candidate
from tasks_review.services.taskwriting import candidate_payload
from tests.tasks_review.core.mining.test_repair_samples import SAMPLES, STORIES, mine_sample
from tests.training.factories import loop_candidate
from trajectories.models import Trajectory
from trajectories.services.ingest import ingest_run_create, ingest_run_execute

# Pinned in form only: writing a task needs no image, running it does (base_image there).
UNBUILT = "traj2env/base@sha256:" + "0" * 64


def kept_sample(
    fmt: str, dataset: Path, *, base_image: str = UNBUILT, check_timeout: int = 600
) -> Candidate:
    """The ``fmt`` sample's kept task (accepted on the desk, kept by the current verifier),
    written under ``dataset`` as ``<fmt>``."""
    run = ingest_run_create(paths=[SAMPLES / STORIES[fmt].sample])
    summary = ingest_run_execute(run_id=run.pk)
    assert summary is not None and summary.usable, summary
    trajectory = Trajectory.objects.get(pk=(summary.trajectory_ids + summary.duplicate_ids)[0])
    _, _, blobs, (mined,), _ = mine_sample(fmt)
    task_name = f"traj2env/{fmt}-repair"
    task_dir = write_task(
        dataset / fmt,
        mined,
        mined.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate(trajectory.source.sha256, mined),
        source_model="test-model",
        base_image=base_image,
        task_name=task_name,
        check_timeout=check_timeout,
    )
    return loop_candidate(
        trajectory=trajectory,
        key=mined.key,
        task_name=task_name,
        task_dir=str(task_dir),
        payload=candidate_payload(mined),
    )
