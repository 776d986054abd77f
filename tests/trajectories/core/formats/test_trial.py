"""Harbor trial folders (`trial.py`): the task a trajectory ran and what it scored."""

from __future__ import annotations

from tests.trajectories.core.formats.helpers import CC_SESSION, TRIAL, TRIAL_ZERO, loaded
from trajectories.core.formats import harbor_trial


def test_harbor_trial_task_and_reward_come_from_result_json() -> None:
    trial = harbor_trial(TRIAL / "agent" / "trajectory.json")
    assert trial is not None
    assert (trial.task, trial.trial, trial.reward) == ("hello-world", "hello-world__AbC123", 1.0)
    assert trial.root == TRIAL


def test_harbor_trial_reward_falls_back_to_reward_json_and_keeps_zero() -> None:
    trial = harbor_trial(TRIAL_ZERO / "agent" / "sessions" / "session.jsonl")
    assert trial is not None
    assert trial.reward == 0.0


def test_no_harbor_trial_outside_a_trial_folder() -> None:
    assert harbor_trial(CC_SESSION) is None


def test_trajectories_in_a_trial_folder_carry_task_and_reward() -> None:
    meta = loaded(TRIAL / "agent" / "trajectory.json").meta
    assert (meta.harbor_task, meta.harbor_reward) == ("hello-world", 1.0)
    meta = loaded(TRIAL_ZERO / "agent" / "sessions" / "session.jsonl").meta
    assert (meta.harbor_task, meta.harbor_reward) == ("hello-world", 0.0)
