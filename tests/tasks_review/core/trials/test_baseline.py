"""The check in the image: failing on the starting files, passing on the reference."""

from __future__ import annotations

import dataclasses

import pytest

from tasks_review.core.trials import TrialDrop, TrialDropReason, check_in_image

from .helpers import left_behind, new_run_id


@pytest.mark.docker
def test_the_check_must_fail_on_the_start_and_pass_on_the_reference_in_the_image(engine, prepared):
    task = prepared["python"]
    run_id = new_run_id()
    baseline = check_in_image(task, engine=engine, run_id=run_id)
    assert not isinstance(baseline, TrialDrop)
    assert baseline.start.reward == 0.0 and baseline.reference.reward == 1.0
    assert set(baseline.reference_passed) == {
        "test_ops.OpsTests.test_add",
        "test_ops.OpsTests.test_mul",
        "test_ops.OpsTests.test_mul_by_zero",
    }
    passing = dataclasses.replace(
        task.spec, command="python3 -m unittest -v tests.test_ops.OpsTests.test_add"
    )
    drop = check_in_image(dataclasses.replace(task, spec=passing), engine=engine, run_id=run_id)
    assert isinstance(drop, TrialDrop)
    assert drop.reason is TrialDropReason.CHECK_NOT_FAILING_AT_START
    unsolved = dataclasses.replace(task.spec, solve_sh=b"#!/bin/sh\nexit 0\n")
    drop = check_in_image(dataclasses.replace(task, spec=unsolved), engine=engine, run_id=run_id)
    assert isinstance(drop, TrialDrop)
    assert drop.reason is TrialDropReason.CHECK_NOT_PASSING_AT_REFERENCE
    assert "did not pass" in drop.detail
    assert left_behind(engine, run_id) == []
