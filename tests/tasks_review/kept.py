"""``generate`` over a folder of sessions, and what a kept candidate must show: the helpers of
the end-to-end tests that keep tasks in Docker (shapes of real sessions, dependencies)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from django.core.management import call_command

from tasks_review.models import Candidate, TrialRun


def generate_over(sessions: Path, folder: Path, *, jobs: int = 2) -> dict[str, Candidate]:
    """Run ``generate`` (the repair family) over ``sessions``, writing under ``folder``; it
    must exit 0. The candidates by their trajectory's working folder."""
    config = folder / "generate.yaml"
    config.write_text(
        json.dumps(
            {
                "source": {"kind": "trajectory", "path": str(sessions), "format": "auto"},
                "pipeline": {
                    "name": "trajectory_to_env",
                    "options": {"families": ["repair"], "jobs": jobs},
                },
                "output": {"destination": str(folder / "out")},
            }
        )
    )
    with pytest.raises(SystemExit) as exit_:
        call_command("generate", config=str(config))
    candidates = {c.trajectory.cwd: c for c in Candidate.objects.select_related("trajectory")}
    outcomes = {
        cwd: (c.status, c.drop_reason, c.drop_detail, c.verification)
        for cwd, c in candidates.items()
    }
    assert exit_.value.code == 0, outcomes
    return candidates


def assert_kept(candidate: Candidate, *, controls: int = 5) -> dict:
    """Kept with its whole trial matrix: the oracle 1 on every repeat, the no-op 0, at least
    ``controls`` graded controls and every one 0. Returns the task's task.toml."""
    assert candidate.status == Candidate.Status.KEPT, (
        candidate.drop_reason,
        candidate.drop_detail,
        candidate.verification,
    )
    trials = TrialRun.objects.filter(candidate=candidate)
    assert [t.reward for t in trials.filter(role="oracle")] == [1.0, 1.0, 1.0]
    assert trials.get(role="noop").reward == 0.0
    graded = trials.exclude(role__in=("oracle", "noop")).filter(status="graded")
    rewards = {t.role: t.reward for t in graded}
    assert graded.count() >= controls and set(rewards.values()) <= {0.0}, rewards
    return tomllib.loads((Path(candidate.task_dir) / "task.toml").read_text())
