"""The Docker fixtures of the trial tests: one engine, one base image, the handmade tasks and
their images, one sequential run of two matrices, and pytest's dated wheels."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from groundwork.core.docker import BaseImageSpec, Engine, InfraError, bootstrap
from tasks_review.core.images import named_variants
from tasks_review.core.taskfiles import PythonPackages
from tasks_review.core.trials import prepare, run_matrices
from tasks_review.core.trials.deps import python_requirements
from tasks_review.core.trials.image import PreparedTask
from tasks_review.core.trials.wheelhouse import build_wheelhouse

from .helpers import (
    HACKABLE_FIX,
    HACKABLE_START,
    NODE_FIX,
    NODE_START,
    PYTEST_START,
    PYTHON_FIX,
    PYTHON_START,
    TRAJECTORY_DATE,
    new_run_id,
    sample_task,
    write,
)

# -- fixtures: one base, three tasks, their images, one sequential run -----------------------------


@pytest.fixture(scope="session")
def engine() -> Engine:
    try:
        return Engine.from_env(timeout=60)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="session")
def base_ref(engine) -> str:
    from django.conf import settings

    # The application's own cache and recipe: tests and `images bootstrap` share one image.
    record = bootstrap(BaseImageSpec(cache_dir=settings.TRAJ2ENV["CACHE_DIR"]), engine=engine)
    return record.pinned_ref


def _variant_ref(engine, *variants: str) -> str:
    from django.conf import settings

    # Cached by recipe like the default (a first bootstrap here: services ~95 s, go ~150 s).
    spec = BaseImageSpec(
        cache_dir=settings.TRAJ2ENV["CACHE_DIR"], variants=named_variants(variants)
    )
    return bootstrap(spec, engine=engine).pinned_ref


@pytest.fixture(scope="session")
def go_base_ref(engine) -> str:
    return _variant_ref(engine, "go")


@pytest.fixture(scope="session")
def services_base_ref(engine) -> str:
    return _variant_ref(engine, "services")


@pytest.fixture(scope="session")
def tasks(tmp_path_factory, base_ref) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("trial-tasks")
    python = dict(command="python3 -m unittest discover -s tests -v", language="python")
    return {
        "python": write(
            root / "python", base_ref, PYTHON_START, PYTHON_FIX, **python, runner="unittest"
        ),
        "node": write(
            root / "node",
            base_ref,
            NODE_START,
            NODE_FIX,
            command="npm test",
            language="node",
            runner="npm",
        ),
        "hackable": write(
            root / "hackable",
            base_ref,
            HACKABLE_START,
            HACKABLE_FIX,
            command="test -f build/report.txt",
            language="python",
            runner="shell",
        ),
    }


@pytest.fixture(scope="session")
def prepared(engine, tasks) -> dict[str, PreparedTask]:
    return {name: prepare(path, engine) for name, path in tasks.items()}


@pytest.fixture(scope="session")
def sequential(engine, prepared):
    """The Python and the Node task's matrices, one after the other (jobs=1), timed."""
    run_id = new_run_id()
    started = time.monotonic()
    results = run_matrices(
        [prepared["python"], prepared["node"]],
        jobs=1,
        engine=engine,
        run_id=run_id,
        naive=True,
        trial_jobs=1,
    )
    wall = time.monotonic() - started
    return {"python": results[0], "node": results[1], "wall": wall, "run_id": run_id}


# A conftest's pytest_* names are taken for hooks: the fixture is named apart from its function.
@pytest.fixture(scope="session", name="pytest_packages")
def dated_pytest_wheels() -> PythonPackages:
    from django.conf import settings

    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError as exc:
        pytest.skip(f"PyPI unreachable ({exc}): the wheelhouse cannot be filled")
    requirements = python_requirements(PYTEST_START, "python3 -m pytest -q", ".")
    assert requirements == ["pytest<9,>=8"]
    house = build_wheelhouse(
        requirements, before=TRAJECTORY_DATE, cache_dir=settings.TRAJ2ENV["WHEELHOUSE_DIR"]
    )
    return PythonPackages(
        requirements=tuple(requirements),
        lock=house.lock,
        wheels=house.wheels,
        resolved_before=house.resolved_before.isoformat(),
        date_source="trajectory",
    )


@pytest.fixture(scope="session")
def probe_samples(engine, base_ref, tmp_path_factory):
    """The four bundled samples, prepared and checked in their images once for every module
    that grades hacks against them: {format: (prepared, baseline)}."""
    from tasks_review.core.trials import check_in_image
    from tasks_review.core.trials.baseline import Baseline

    out = tmp_path_factory.mktemp("probe-samples")
    run_id = new_run_id()
    kept = {}
    for fmt in ("claude-code", "codex", "pi", "atif"):
        task = prepare(sample_task(fmt, out, base_ref), engine, run_id=run_id)
        baseline = check_in_image(task, engine=engine, run_id=run_id)
        assert isinstance(baseline, Baseline), baseline
        kept[fmt] = (task, baseline)
    return kept
