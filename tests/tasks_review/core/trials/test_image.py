"""A task's image: built once, probed for what the check runs; drops before any trial."""

from __future__ import annotations

import pytest

from tasks_review.core.trials import MatrixStatus, TrialDropReason, plan_check, prepare, run_matrix
from tasks_review.core.trials.image import probe
from tests.groundwork.core.docker.fakes import NoEngine

from .helpers import (
    FAKE_BASE,
    GO_FIX,
    GO_START,
    PYTEST_FIX,
    PYTEST_START,
    PYTHON_FIX,
    PYTHON_START,
    new_run_id,
    write,
)


def test_declared_dependencies_without_an_offline_source_drop_before_building(tmp_path):
    start = {**PYTHON_START, "requirements.txt": b"requests==2.31.0\n"}
    task = write(
        tmp_path / "deps",
        FAKE_BASE,
        start,
        PYTHON_FIX,
        command="python3 -m unittest discover -s tests",
        language="python",
        runner="unittest",
    )
    prepared = prepare(task, NoEngine())  # type: ignore[arg-type]
    assert prepared.drop is not None and prepared.image is None
    assert prepared.drop.reason is TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE
    assert "requests ==2.31.0" in prepared.drop.detail
    result = run_matrix(prepared, engine=NoEngine(), run_id="unused")  # type: ignore[arg-type]
    assert result.status is MatrixStatus.DROPPED and result.trials == ()


def test_a_go_module_that_needs_downloads_drops_before_its_image_is_built(tmp_path):
    go_mod = b"module example.com/calc\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n"
    start = {**GO_START, "go.mod": go_mod}
    task = write(
        tmp_path / "go",
        FAKE_BASE,
        start,
        GO_FIX,
        command="go test ./...",
        language="go",
        runner="go",
    )
    prepared = prepare(task, NoEngine())  # type: ignore[arg-type]
    assert prepared.image is None and prepared.drop is not None
    assert prepared.drop.reason is TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE
    assert "golang.org/x/text" in prepared.drop.detail and "vendor" in prepared.drop.detail


@pytest.mark.docker
def test_a_check_tool_the_image_lacks_drops_the_task(engine, prepared):
    task = prepared["python"]
    plan = plan_check("python3 -m pytest -q && jest", ".", {})
    lacking = probe(
        engine,
        task.spec,
        task.image.image_id,
        plan.requirements,
        run_id=new_run_id(),
        limits=task.limits,
    )
    assert lacking == ["python module pytest", "program jest"]


@pytest.mark.docker
def test_a_pytest_check_without_its_wheels_drops_as_unavailable_offline(engine, base_ref, tmp_path):
    task_dir = write(
        tmp_path / "bare",
        base_ref,
        PYTEST_START,
        PYTEST_FIX,
        command="python3 -m pytest -q",
        language="python",
        runner="pytest",
    )
    prepared = prepare(task_dir, engine, run_id=new_run_id())
    assert prepared.drop is not None
    assert prepared.drop.reason is TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE
    assert "pytest" in prepared.drop.detail
