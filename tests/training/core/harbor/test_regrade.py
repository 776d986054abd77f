"""The one re-grader, for mined and user-written tasks alike: what it makes of a collected folder
before any container (a missing folder leaves the rollout ungraded, one too large to take scores
0), and how it grades with the task its source gives (no Docker: the verifier is a fake)."""

from __future__ import annotations

import inspect
import time
from pathlib import Path

from groundwork.core.docker import InfraError
from tasks_review.core.trials import Scored, TaskUnusable, mined_task
from tasks_review.core.trials.model import TrialStatus
from training.core.harbor import regrade
from training.core.harbor.regrade import Regrade, TaskGrader, collected


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


# -- one grader for every kind of task, parametrised by where the task comes from -----------------


class Verifier:
    """A task's verifier at the grader's seam: scores ``reward``, or raises InfraError."""

    def __init__(self, reward: float | None = 1.0, *, fails: bool = False) -> None:
        self.reward, self.fails = reward, fails
        self.graded: list[set[str]] = []

    def grade(self, engine, submission, *, run_id: str) -> Scored:
        if self.fails:
            raise InfraError("the daemon went away", log="docker said no")
        self.graded.append(set(submission.files))
        problem = None if self.reward is not None else "the task's tests/test.sh gave no reward"
        return Scored(self.reward, "graded", {"reasons": []}, problem)


def source_of(task, asked: list | None = None):
    def source(task_dir: Path, *, engine, run_id: str):
        if asked is not None:
            asked.append((task_dir, engine, run_id))
        if isinstance(task, Exception):
            raise task
        return task

    return source


def app(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir(exist_ok=True)
    (tmp_path / "app" / "main.py").write_text("print('done')\n")
    return tmp_path / "app"


def test_the_grader_takes_the_task_from_its_source_and_scores_with_the_tasks_verifier(tmp_path):
    asked: list = []
    verifier = Verifier(1.0)
    engine = object()
    grader = TaskGrader.prepare(
        tmp_path, engine=engine, run_id="regrade-1", source=source_of(verifier, asked)
    )
    result = grader.grade(app(tmp_path), harbor_reward=0.0)
    assert asked == [(tmp_path, engine, "regrade-1")]
    assert (result.reward, result.status, result.agrees) == (1.0, TrialStatus.GRADED, False)
    assert verifier.graded == [{"main.py"}] and result.logs == "graded"


def test_a_mined_task_is_the_default_source():
    assert inspect.signature(TaskGrader.prepare).parameters["source"].default is mined_task


def test_a_task_its_source_cannot_make_ready_leaves_every_rollout_ungraded_with_why(tmp_path):
    unusable = TaskUnusable("the task folder is no longer usable: no tests/test.sh")
    grader = TaskGrader.prepare(tmp_path, engine=None, run_id="r", source=source_of(unusable))
    result = grader.grade(app(tmp_path), harbor_reward=1.0)
    assert (result.reward, result.status) == (None, TrialStatus.UNGRADED)
    assert result.evidence["infra_error"] == str(unusable)
    built = InfraError("build failed")
    grader = TaskGrader.prepare(tmp_path, engine=None, run_id="r", source=source_of(built))
    assert (
        "could not be prepared: build failed" in grader.grade(app(tmp_path)).evidence["infra_error"]
    )


def test_a_verifier_that_gives_no_reward_or_fails_leaves_the_rollout_ungraded(tmp_path):
    silent = TaskGrader.prepare(tmp_path, engine=None, run_id="r", source=source_of(Verifier(None)))
    result = silent.grade(app(tmp_path))
    assert (result.reward, result.status) == (None, TrialStatus.UNGRADED)
    assert result.evidence["infra_error"] == "the task's tests/test.sh gave no reward"
    broken = Verifier(fails=True)
    failing = TaskGrader.prepare(tmp_path, engine=None, run_id="r", source=source_of(broken))
    result = failing.grade(app(tmp_path))
    assert (result.reward, result.evidence["infra_error"]) == (None, "the daemon went away")
    assert result.logs == "docker said no"
