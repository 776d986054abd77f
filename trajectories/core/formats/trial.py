"""Harbor trial folders: which task a trajectory was a run of, and what it scored.

A trial folder holds ``result.json`` beside the agent's logs and the verifier's
reward (``harbor.models.trial.paths.TrialPaths``); multi-step trials keep those
under ``steps/<name>/``. ``result.json`` is read as plain JSON rather than with
Harbor's ``TrialResult`` model: forks add their own keys (the evolving-skills
corpus has ``skill_learning_result``) and only two fields are needed here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .model import HarborTrial

_MARKERS = (
    Path("agent") / "trajectory.json",
    Path("verifier") / "reward.txt",
    Path("verifier") / "reward.json",
)
_STEP_MARKERS = ("*/agent/trajectory.json", "*/verifier/reward.txt", "*/verifier/reward.json")


def harbor_trial(path: Path) -> HarborTrial | None:
    """The Harbor trial a trajectory file sits in, if any, nearest folder first."""
    try:
        for folder in Path(path).absolute().parents:
            if (folder / "result.json").is_file() and _is_trial(folder):
                return _read_trial(folder)
    except OSError:  # an unreadable ancestor: no trial can be named
        return None
    return None


def _is_trial(folder: Path) -> bool:
    if any((folder / marker).is_file() for marker in _MARKERS):
        return True
    steps = folder / "steps"
    return steps.is_dir() and any(next(steps.glob(p), None) for p in _STEP_MARKERS)


def _read_trial(folder: Path) -> HarborTrial:
    result = _json(folder / "result.json")
    result = result if isinstance(result, dict) else {}
    task = result.get("task_name")
    if not isinstance(task, str) or not task:
        task_path = _dig(result, "config", "task", "path")
        task = Path(task_path).name if isinstance(task_path, str) and task_path else None
    trial = result.get("trial_name")
    reward = _number(_dig(result, "verifier_result", "rewards", "reward"))
    task_path = _dig(result, "config", "task", "path")
    trials_dir = _dig(result, "config", "trials_dir")
    return HarborTrial(
        root=folder,
        task=task,
        trial=trial if isinstance(trial, str) else folder.name,
        reward=reward if reward is not None else _reward_files(folder),
        task_path=task_path if isinstance(task_path, str) and task_path else None,
        trials_dir=trials_dir if isinstance(trials_dir, str) and trials_dir else None,
    )


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _reward_files(folder: Path) -> float | None:
    for verifier in (folder / "verifier", *sorted(folder.glob("steps/*/verifier"))):
        try:
            text = (verifier / "reward.txt").read_text(encoding="utf-8")
            value = _number(text.strip())
        except (OSError, UnicodeDecodeError):
            value = None
        if value is None:
            data = _json(verifier / "reward.json")
            value = _number(data.get("reward")) if isinstance(data, dict) else None
        if value is not None:
            return value
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
