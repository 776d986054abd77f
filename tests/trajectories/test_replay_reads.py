"""The stepper's reads rebuild the files at any step from one Step row and at most two chunks, and
agree with the core StateIndex at every step of real and synthetic trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajectories import replay_reads as reads
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats import Loaded, TrajectoryMeta
from trajectories.core.replay import StateIndex, replay
from trajectories.core.replay.synthetic import claude_code_session
from trajectories.models import Command, Step, Trajectory
from trajectories.services.ingest import ingest_run_create, ingest_run_execute
from trajectories.services.replay import replay_compute
from trajectories.services.trajectories import trajectory_store
from trajectories.store import sha256_hex

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def stored(atif: dict[str, Any], side: dict[str, Any], *, root: str, title: str = "") -> Trajectory:
    """Store ATIF and its side data through the ingest service and replay it with the real one."""
    data = json.dumps(atif).encode()
    meta = TrajectoryMeta(
        session_id=atif.get("session_id"), agent_name="claude-code", agent_version="test",
        model_name="claude-sonnet-4-5", cwd=root, started_at=None, steps=len(atif["steps"]),
        prompt_tokens=None, completion_tokens=None, cost_usd=None,
        title=title or f"synthetic {len(atif['steps'])} steps", parent_session_id=None,
        is_subagent=False, harbor_task=None, harbor_reward=None,
    )  # fmt: skip
    trajectory = trajectory_store(
        path=Path(f"/data/{sha256_hex(data)[:12]}.json"),
        data=data,
        sha=sha256_hex(data),
        loaded=Loaded(format="claude-code", atif=atif, side_data=side, meta=meta),
    )
    assert replay_compute(trajectory_id=trajectory.id) is not None
    trajectory.refresh_from_db()
    return trajectory


def core_index(trajectory: Trajectory, every: int) -> StateIndex:
    """The answer the core gives for the same input, to hold the database reads against."""
    atif = json.loads(trajectory.atif.content())
    side = json.loads(trajectory.side_data.content()) if trajectory.side_data else {}
    result = replay(atif, side, root=trajectory.cwd or None, blobs=MemoryBlobs())
    return StateIndex.build(result, every=every)


def merged(atif: dict[str, Any], size: int) -> dict[str, Any]:
    """The same session with every ``size`` agent steps folded into one step of several calls."""
    steps: list[dict[str, Any]] = []
    for step in atif["steps"]:
        last = steps[-1] if steps else None
        if (
            last is not None
            and step.get("tool_calls")
            and last.get("tool_calls")
            and len(last["tool_calls"]) < size
        ):
            last["tool_calls"] = last["tool_calls"] + step["tool_calls"]
            results = (last.get("observation") or {}).get("results", [])
            results = results + (step.get("observation") or {}).get("results", [])
            last["observation"] = {"results": results}
        else:
            steps.append({**step, "step_id": len(steps) + 1})
    return {**atif, "steps": steps}


def assert_every_step_matches(
    trajectory: Trajectory, every: int, django_assert_max_num_queries
) -> None:
    index = core_index(trajectory, every)
    replay_row = reads.replay_of(trajectory)
    assert replay_row is not None and replay_row.every == every
    assert trajectory.steps_count == len(index.step_events) - 1
    for i in range(trajectory.steps_count):
        with django_assert_max_num_queries(2):  # the Step row, then one query for its chunks
            step = reads.step_get(trajectory_id=trajectory.id, index=i)
            assert step is not None
            files = reads.step_files(replay=replay_row, step=step)
        assert files is not None
        assert dict(files.after) == index.state_at_step(i), f"state after step {i}"
        assert dict(files.before) == index.state_at_step(i - 1), f"state before step {i}"
        assert files.changes == index.diff(i), f"changes at step {i}"
        with django_assert_max_num_queries(2):  # the step's event bound, then one chunk
            assert reads.step_state(trajectory, i) == index.state_at_step(i)


@pytest.mark.parametrize("every", [1, 4, 64])
def test_state_and_diff_match_the_core_index_at_every_step(
    settings, every, django_assert_max_num_queries
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": every}
    s = claude_code_session(150, seed=7)
    trajectory = stored(s.atif, s.side_data, root=s.root)
    assert_every_step_matches(trajectory, every, django_assert_max_num_queries)


def test_steps_of_many_calls_that_span_chunks_match_the_core_index(
    settings, django_assert_max_num_queries
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": 2}
    s = claude_code_session(160, seed=3)
    atif = merged(s.atif, 5)
    trajectory = stored(atif, s.side_data, root=s.root)
    events = Step.objects.filter(trajectory=trajectory).values_list("events_start", "events_end")
    assert any(end - start >= 4 for start, end in events), "some step spans several chunks"
    assert_every_step_matches(trajectory, 2, django_assert_max_num_queries)


def test_the_real_samples_match_the_core_index_at_every_step(
    settings, django_assert_max_num_queries
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": 3}
    run = ingest_run_create(paths=[SAMPLES])
    summary = ingest_run_execute(run_id=run.id)
    assert summary is not None and summary.ingested == 4
    for trajectory_id in summary.trajectory_ids:
        assert replay_compute(trajectory_id=trajectory_id) is not None
        trajectory = Trajectory.objects.get(id=trajectory_id)
        assert_every_step_matches(trajectory, 3, django_assert_max_num_queries)
        assert Command.objects.filter(trajectory=trajectory).exclude(check_kind="").count() == 2


def test_the_file_state_of_the_last_step_is_the_replay_s_final_files(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": 16}
    s = claude_code_session(200, seed=11)
    trajectory = stored(s.atif, s.side_data, root=s.root)
    last = reads.step_get(trajectory_id=trajectory.id, index=trajectory.steps_count - 1)
    files = reads.step_files(replay=reads.replay_of(trajectory), step=last)
    shas = {path: entry.sha for path, entry in files.after.items()}
    contents = reads.blob_contents(shas.values())
    assert {path: contents[sha].decode() for path, sha in shas.items()} == s.files


def test_a_trajectory_without_a_replay_has_no_file_state(settings):
    from tests.trajectories.factories import make_trajectory

    trajectory = make_trajectory()
    step = reads.step_get(trajectory_id=trajectory.id, index=0)
    assert step is not None and step.events_start is None
    assert reads.replay_of(reads.trajectory_for_stepper(trajectory_id=trajectory.id)) is None
    with pytest.raises(LookupError):
        reads.step_state(trajectory, 0)


def test_a_missing_chunk_is_reported_not_guessed(settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REPLAY_CHECKPOINT_EVERY": 4}
    s = claude_code_session(40, seed=2)
    trajectory = stored(s.atif, s.side_data, root=s.root)
    replay_row = reads.replay_of(trajectory)
    replay_row.chunks.filter(number=5).delete()
    step = Step.objects.filter(
        trajectory=trajectory, events_start__gte=20, events_end__lt=24
    ).first()
    with pytest.raises(reads.ReplayIncomplete):
        reads.step_files(replay=replay_row, step=step)


def test_blob_contents_reads_only_the_asked_blobs_in_one_query(settings, django_assert_num_queries):
    s = claude_code_session(60, seed=5)
    trajectory = stored(s.atif, s.side_data, root=s.root)
    step = reads.step_get(trajectory_id=trajectory.id, index=trajectory.steps_count - 1)
    files = reads.step_files(replay=reads.replay_of(trajectory), step=step)
    wanted = [e.sha for e in list(files.after.values())[:2]]
    with django_assert_num_queries(1):
        contents = reads.blob_contents(wanted + [None])
    assert set(contents) == set(wanted)
    with django_assert_num_queries(0):
        assert reads.blob_contents([None]) == {}


def test_check_neighbours_find_the_nearest_checked_steps_either_side(settings):
    s = claude_code_session(120, seed=7)
    trajectory = stored(s.atif, s.side_data, root=s.root)
    checked = sorted({step for step, _code in s.checks})
    assert len(checked) >= 3
    middle = checked[1]
    assert reads.check_neighbours(trajectory_id=trajectory.id, index=middle) == (
        checked[0],
        checked[2],
    )
    assert reads.check_neighbours(trajectory_id=trajectory.id, index=0) == (None, checked[0])
    assert reads.check_neighbours(trajectory_id=trajectory.id, index=checked[-1])[1] is None


def test_the_step_window_labels_neighbours_and_stays_inside_the_trajectory(settings):
    s = claude_code_session(50, seed=1)
    trajectory = stored(s.atif, s.side_data, root=s.root)
    count = trajectory.steps_count
    middle = reads.step_window(trajectory_id=trajectory.id, index=25, count=count, radius=3)
    assert [w.index for w in middle] == list(range(22, 29))
    start = reads.step_window(trajectory_id=trajectory.id, index=0, count=count, radius=3)
    assert [w.index for w in start] == list(range(0, 7))
    assert start[0].source == "user" and start[0].gist.startswith("Build the modules")
    end = reads.step_window(trajectory_id=trajectory.id, index=count - 1, count=count, radius=3)
    assert [w.index for w in end] == list(range(count - 7, count))
    assert all(w.tool for w in middle if w.source == "agent")


def test_checks_in_a_range_say_pass_or_fail_per_step(settings):
    s = claude_code_session(120, seed=7)
    trajectory = stored(s.atif, s.side_data, root=s.root)
    outcomes = reads.checks_in(trajectory_id=trajectory.id, low=0, high=trajectory.steps_count)
    assert outcomes == {step: code == 0 for step, code in s.checks}
