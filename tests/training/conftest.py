"""The training tests' shared Docker work: the two sample tasks kept once and `harbor run` of
the oracle and the no-op on them once, for every module that reads them (the Harbor tests and
the rollout import's), in one xdist group so that one worker does it once."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundwork.core.docker import BaseImageSpec, Engine, InfraError, bootstrap
from tasks_review.core.taskfiles import SourceTrace, write_task
from tasks_review.core.trials import MatrixStatus, verify_task
from tests.tasks_review.core.mining.test_repair_samples import mine_sample
from tests.training.core.harbor.helpers import SAMPLES, harbor_run, new_run_id
from training.core.harbor.jobs import read_jobs

# The modules that read `kept` or `runs` carry this mark (scripts/test.sh runs --dist loadgroup).
HARBOR_GROUP = pytest.mark.xdist_group("harbor-kept")


@pytest.fixture(scope="session")
def harbor_engine() -> Engine:
    try:
        return Engine.from_env(timeout=60)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="session")
def harbor_base_ref(harbor_engine) -> str:
    from django.conf import settings

    # Built when missing (a fresh CI machine); a lock makes the workers that ask at once build
    # it once.
    spec = BaseImageSpec(cache_dir=settings.VAR_DIR / "cache")
    return bootstrap(spec, engine=harbor_engine).pinned_ref


@pytest.fixture(scope="session")
def kept(harbor_engine, harbor_base_ref, tmp_path_factory) -> dict[str, Path]:
    """The Claude Code and the Codex sample's repairs, written and kept by the trial matrix."""
    dataset = tmp_path_factory.mktemp("harbor-dataset")
    tasks = {}
    for fmt in SAMPLES:
        _, _, blobs, (candidate,), _ = mine_sample(fmt)
        task_dir = write_task(
            dataset / fmt,
            candidate,
            candidate.instruction,
            blobs,
            source_trace=SourceTrace.for_candidate("0f" * 32, candidate),
            source_model="test-model",
            base_image=harbor_base_ref,
            check_timeout=120,
        )
        result = verify_task(task_dir, run_id=new_run_id("keep"), engine=harbor_engine, repeats=1)
        assert result.status is MatrixStatus.KEPT, result.reasons
        tasks[fmt] = task_dir
    return tasks


@pytest.fixture(scope="session")
def runs(harbor_engine, kept, tmp_path_factory) -> dict:
    """`harbor run` of the oracle and the no-op on the kept tasks: the jobs folder, read."""
    jobs = tmp_path_factory.mktemp("harbor-jobs")
    run_id = new_run_id("run")
    dataset = next(iter(kept.values())).parent
    for agent in ("oracle", "nop"):
        done = harbor_run(dataset, agent, jobs, run_id)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"jobs": jobs, "run_id": run_id, "trials": read_jobs(jobs)}
