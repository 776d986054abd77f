"""The replay service: a trajectory is replayed once into chunks and commands, a second replay
replaces the first, a replay that raises is recorded failed with its reason, and a trajectory
another worker is replaying is left to it."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.trajectories.factories import make_trajectory
from trajectories.models import Command, Replay, ReplayChunk, Trajectory
from trajectories.services import replay as service
from trajectories.services.replay import replay_compute

pytestmark = pytest.mark.django_db

S = Trajectory.Status

STEPS = [
    {"step_id": 1, "source": "user", "message": "run the tests"},
    {
        "step_id": 2,
        "source": "agent",
        "message": "",
        "tool_calls": [
            {"tool_call_id": "t1", "function_name": "Bash", "arguments": {"command": "pytest -q"}}
        ],
        "observation": {"results": [{"source_call_id": "t1", "content": "1 passed"}]},
    },
]


def test_a_replay_stores_its_chunks_and_commands_and_marks_the_trajectory_replayed():
    trajectory = make_trajectory(steps=STEPS)
    replay = replay_compute(trajectory_id=trajectory.id)
    assert replay is not None
    trajectory.refresh_from_db()
    assert trajectory.status == S.REPLAYED
    assert ReplayChunk.objects.filter(replay=replay).exists()
    assert list(
        Command.objects.filter(trajectory=trajectory).values_list("command", flat=True)
    ) == ["pytest -q"]


def test_a_second_replay_replaces_the_first():
    trajectory = make_trajectory(steps=STEPS)
    first = replay_compute(trajectory_id=trajectory.id)
    Trajectory.objects.filter(id=trajectory.id).update(status=S.INGESTED)
    second = replay_compute(trajectory_id=trajectory.id)
    assert first is not None and second is not None and first.id != second.id
    assert list(Replay.objects.filter(trajectory=trajectory)) == [second]
    assert Command.objects.filter(trajectory=trajectory).count() == 1


def test_a_replay_that_raises_is_recorded_failed_with_its_reason(monkeypatch):
    class Broken:
        def replay(self, blobs):
            raise ValueError("an unexpected shape at step 2")

    monkeypatch.setattr(service, "replay_inputs", lambda trajectory: Broken())
    trajectory = make_trajectory(steps=STEPS)
    assert replay_compute(trajectory_id=trajectory.id) is None
    trajectory.refresh_from_db()
    assert trajectory.status == S.REPLAY_FAILED
    assert trajectory.replay_error == "an unexpected shape at step 2"
    assert not Replay.objects.filter(trajectory=trajectory).exists()


def test_a_trajectory_another_worker_is_replaying_is_left_to_it():
    trajectory = make_trajectory(steps=STEPS, status=S.REPLAYING, replay_started_at=timezone.now())
    assert replay_compute(trajectory_id=trajectory.id) is None
    trajectory.refresh_from_db()
    assert trajectory.status == S.REPLAYING
    assert not Replay.objects.filter(trajectory=trajectory).exists()
