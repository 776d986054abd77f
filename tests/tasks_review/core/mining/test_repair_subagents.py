"""Mining a repair whose fix a subagent made: the parent's replay carries the subagent's edit."""

from __future__ import annotations

from tasks_review.core.mining import DropReason, find_repair_candidates
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import StateIndex, Subagent, replay, spawned

from .repair_helpers import CALC_BUGGY, CALC_FIXED, ROOT, Mined, Session, python_story, texts

FIX_BY_SUBAGENT = {"description": "Fix calc", "prompt": "Make the add test pass"}


def parent() -> Session:
    """Fails pytest, hands the fix to a Task, then runs pytest again (passes)."""
    story = python_story()
    story.builder.call(
        "Task",
        FIX_BY_SUBAGENT,
        "I fixed add() in calc.py.",
        call_id="task_fix",
        side={"status": "completed", "agentId": "fixer"},
    )
    return story.run("python -m pytest -q", output="1 passed in 0.01s")


def subagent() -> Subagent:
    session = Session().user(FIX_BY_SUBAGENT["prompt"])
    session.edit("calc.py", "    return a - b\n", CALC_FIXED.split("\n")[1] + "\n")
    atif, side = session.builder.build()
    return Subagent("agent-fixer", atif, side)


def mine(session: Session, subagents: dict[str, Subagent] | None) -> Mined:
    atif, side = session.builder.build()
    blobs = MemoryBlobs()
    result = replay(atif, side, root=ROOT, blobs=blobs, subagents=subagents)
    index = StateIndex.build(result, every=4)
    candidates, drops = find_repair_candidates(result, index, blobs, atif)
    return Mined(candidates, drops, blobs)


def test_a_fix_made_by_a_subagent_is_mined_with_the_subagents_edit_as_the_reference():
    atif, side = parent().builder.build()
    recorded = subagent()
    assert spawned(atif, side) == {"task_fix": recorded.session_id}
    mined = mine(parent(), {"task_fix": recorded})
    candidate = mined.only
    assert texts(candidate.start_files, mined.blobs)["calc.py"] == CALC_BUGGY
    assert texts(candidate.ref_files, mined.blobs)["calc.py"] == CALC_FIXED
    assert candidate.modified == ("calc.py",)


def test_without_the_subagents_recording_the_fix_is_not_mined_from_an_unknown_tree():
    mined = mine(parent(), None)
    assert not mined.candidates
    assert mined.dropped.reason is DropReason.FIX_TOUCHES_LOST_FILE
