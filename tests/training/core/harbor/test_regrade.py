"""What the re-graders (mined and sandbox tasks) make of a collected folder before any
container: a missing folder leaves the rollout ungraded, one too large to take scores 0."""

from __future__ import annotations

import time

from tasks_review.core.trials.model import TrialStatus
from training.core.harbor import regrade
from training.core.harbor.regrade import Regrade, collected


def test_no_collected_folder_is_ungraded_with_the_reason(tmp_path):
    result = collected(tmp_path / "missing", 1.0, time.monotonic())
    assert isinstance(result, Regrade)
    assert (result.reward, result.status, result.harbor_reward) == (None, TrialStatus.UNGRADED, 1.0)
    assert "no collected project folder" in result.evidence["infra_error"]
    assert isinstance(collected(None, None, time.monotonic()), Regrade)


def test_a_folder_too_large_to_take_scores_zero(tmp_path, monkeypatch):
    monkeypatch.setattr(regrade, "SUBMISSION_MAX_ENTRIES", 2)
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("x = 1\n")
    result = collected(tmp_path, 1.0, time.monotonic())
    assert isinstance(result, Regrade)
    assert (result.reward, result.status) == (0.0, TrialStatus.GRADED)
    assert "exceeds the size limit (3 files" in result.evidence["reasons"][0]


def test_a_folder_within_the_limits_is_a_submission_of_its_files(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    result = collected(tmp_path, None, time.monotonic())
    assert not isinstance(result, Regrade)
    assert result.problem is None and "a.py" in result.files
