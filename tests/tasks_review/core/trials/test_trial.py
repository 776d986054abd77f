"""One trial: the agent's container, then the separate verifier's."""

from __future__ import annotations

import pytest

from tasks_review.core.trials import (
    Control,
    MinedTrial,
    Role,
    TrialStatus,
    check_in_image,
    run_trial,
)

from .helpers import left_behind, new_run_id


@pytest.mark.docker
def test_an_oversized_submission_scores_zero_without_a_verifier_run(engine, prepared):
    task = prepared["python"]
    run_id = new_run_id()
    baseline = check_in_image(task, engine=engine, run_id=run_id)
    huge = Control(
        name="huge_submission",
        description="40 MB of zeros in the project",
        shell="head -c 40000000 /dev/zero > blob.bin",
    )
    trial = run_trial(
        MinedTrial(task, baseline), role=Role.CONTROL, control=huge, engine=engine, run_id=run_id
    )
    assert (trial.reward, trial.status) == (0.0, TrialStatus.GRADED)
    assert "size limit" in trial.detail["reasons"][0]
    assert left_behind(engine, run_id) == []
