"""Ingest links a Claude Code subagent's log to its parent, and the parent's stored replay carries
the subagent's edits; a parent replayed before its subagent arrived is replayed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claude_code_log import Log as ClaudeCodeLog
from trajectories import replay_reads as reads
from trajectories.models import Replay, Trajectory
from trajectories.services.ingest import IngestSummary, ingest_run_create, ingest_run_execute
from trajectories.services.replay import replay_compute

pytestmark = pytest.mark.django_db

PARENT = "bbbbbbbb-0000-4000-8000-000000000002"
AGENT = "f1x3r"
CWD = "/work/app"
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def Log(*, agent_id: str | None = None) -> ClaudeCodeLog:  # noqa: N802 (reads as the class)
    return ClaudeCodeLog(session_id=PARENT, cwd=CWD, agent_id=agent_id)


def write_pair(folder: Path) -> tuple[Path, Path]:
    """A parent whose pytest fails, a Task whose subagent fixes calc.py, and pytest passing."""
    parent = (
        Log()
        .user("Write add() in calc.py with a test, and make the test pass")
        .call("w1", "Write", {"file_path": f"{CWD}/calc.py", "content": BUGGY}, "File created")
        .call("w2", "Write", {"file_path": f"{CWD}/test_calc.py", "content": TEST}, "File created")
        .call("b1", "Bash", {"command": "python -m pytest -q"}, "Exit code 1\n1 failed", error=True)
        .call(
            "t1", "Task", {"description": "Fix add", "prompt": "Fix add() in calc.py"},
            "Fixed add().", raw={"status": "completed", "agentId": AGENT, "content": []},
        )
        .call("b2", "Bash", {"command": "python -m pytest -q"}, "1 passed in 0.01s")
    )  # fmt: skip
    subagent = (
        Log(agent_id=AGENT)
        .user("Fix add() in calc.py")
        .call(
            "e1", "Edit",
            {"file_path": f"{CWD}/calc.py", "old_string": "a - b", "new_string": "a + b"},
            f"The file {CWD}/calc.py has been updated.",
        )
    )  # fmt: skip
    return (
        parent.save(folder / f"{PARENT}.jsonl"),
        subagent.save(folder / PARENT / "subagents" / f"agent-{AGENT}.jsonl"),
    )


def ingest(*paths: Path) -> IngestSummary:
    run = ingest_run_create(paths=paths)
    summary = ingest_run_execute(run_id=run.id)
    assert summary is not None and not summary.failed, summary and summary.failed
    return summary


def parent_row() -> Trajectory:
    return Trajectory.objects.get(session_id=PARENT)


def replayed(trajectory: Trajectory) -> Replay:
    assert replay_compute(trajectory_id=trajectory.id) is not None
    return Replay.objects.get(trajectory=trajectory)


def final_calc(trajectory: Trajectory) -> str:
    state = reads.step_state(trajectory, trajectory.steps.count() - 1)
    sha = state["calc.py"].sha
    return reads.blob_contents([sha])[sha or ""].decode()


def test_the_parents_stored_replay_ends_with_the_subagents_fix_and_no_uncertain_tree(tmp_path):
    write_pair(tmp_path)
    ingest(tmp_path)
    child = Trajectory.objects.get(session_id=f"agent-{AGENT}")
    assert child.is_subagent and child.parent == parent_row()
    replay = replayed(parent_row())
    assert replay.uncertain_trees == []
    assert final_calc(parent_row()) == FIXED


def test_without_the_subagents_log_the_parent_after_the_task_is_uncertain(tmp_path):
    parent, _ = write_pair(tmp_path)
    ingest(parent)
    assert replayed(parent_row()).uncertain_trees == ["."]


def test_a_subagents_log_with_lines_lost_is_not_trusted_to_say_what_it_edited(tmp_path):
    _, subagent = write_pair(tmp_path)
    with subagent.open("a") as log:
        log.write('{"type": "assistant", "message": {"content": [{"type": "tool_use"\n')
    ingest(tmp_path)
    assert Trajectory.objects.get(session_id=f"agent-{AGENT}").partial
    assert replayed(parent_row()).uncertain_trees == ["."]


def test_a_parent_replayed_before_its_subagent_arrived_is_set_to_replay_again(tmp_path):
    parent, subagent = write_pair(tmp_path)
    ingest(parent)
    replayed(parent_row())
    summary = ingest(subagent)
    assert summary.replay_again == [parent_row().id]
    assert parent_row().status == Trajectory.Status.INGESTED
    assert replayed(parent_row()).uncertain_trees == []
    assert final_calc(parent_row()) == FIXED


@pytest.mark.corpus
def test_a_real_session_ingested_with_its_subagents_log_replays_with_no_uncertain_tree(corpus):
    ingest(corpus / "claude-code" / "kfischer-okarin-scripts-and-tools" / "example-project")
    parent = Trajectory.objects.get(session_id="b3edadab-bca0-4054-9b41-f7ffa6941260")
    assert parent.subagents.get().session_id == "agent-a434715"
    assert replayed(parent).uncertain_trees == []
