"""A subagent's edits, played into its parent's replay at the step where its Task returned."""

from __future__ import annotations

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import StateIndex, Subagent, replay, spawned
from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import ROOT, UNCERTAIN, render

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TASK = {"description": "Fix add", "prompt": "Fix add() in calc.py", "subagent_type": "general"}
TASK_DONE = {"status": "completed", "agentId": "a1b2c3", "content": []}


def child() -> AtifBuilder:
    """The subagent: reads calc.py, fixes it, then writes a note."""
    b = AtifBuilder(root=ROOT)
    b.user("Fix add() in calc.py")
    listing = "     1\u2192def add(a, b):\n     2\u2192    return a - b\n     3\u2192"
    b.call("Read", {"file_path": f"{ROOT}/calc.py"}, listing)
    b.call(
        "Edit",
        {"file_path": f"{ROOT}/calc.py", "old_string": "a - b", "new_string": "a + b"},
        f"The file {ROOT}/calc.py has been updated.",
        call_id="sub_edit",
    )
    b.call("Write", {"file_path": f"{ROOT}/NOTES.md", "content": "fixed\n"}, "File created")
    return b


def parent(*, agent_side: bool = True) -> AtifBuilder:
    """The parent: writes calc.py, hands the fix to a Task, then edits what the subagent wrote."""
    b = AtifBuilder(root=ROOT)
    b.user("Write calc.py and have a subagent fix it")
    b.call("Write", {"file_path": f"{ROOT}/calc.py", "content": CALC}, "File created")
    b.call("Task", TASK, "Fixed it.", call_id="task_1", side=TASK_DONE if agent_side else None)
    b.call(
        "Edit",
        {"file_path": f"{ROOT}/calc.py", "old_string": "a + b", "new_string": "b + a"},
        f"The file {ROOT}/calc.py has been updated.",
    )
    return b


def played(parent_b: AtifBuilder, subagents: dict[str, Subagent] | None):
    atif, side = parent_b.build()
    blobs = MemoryBlobs()
    return replay(atif, side, root=ROOT, blobs=blobs, subagents=subagents), blobs


def recording() -> dict[str, Subagent]:
    atif, side = child().build()
    return {"task_1": Subagent("agent-a1b2c3", atif, side)}


def test_the_task_call_names_the_subagent_session_it_spawned():
    atif, side = parent().build()
    assert spawned(atif, side) == {"task_1": "agent-a1b2c3"}


def test_the_session_is_named_by_the_atif_ref_or_the_side_data_when_the_raw_result_is_gone():
    atif, side = parent(agent_side=False).build()
    assert spawned(atif, side) == {}
    atif["steps"][2]["observation"]["results"][0]["subagent_trajectory_ref"] = [
        {"trajectory_path": "agent-a1b2c3.jsonl", "session_id": "test"}
    ]
    assert spawned(atif, side) == {"task_1": "agent-a1b2c3"}
    side["subagents"] = [
        {"tool_call_id": "task_9", "session_id": "test", "path": "s/subagents/agent-ff.jsonl"}
    ]
    assert spawned(atif, side)["task_9"] == "agent-ff"


def test_the_parent_replay_ends_with_the_file_as_the_subagent_left_it_then_edited_on():
    result, blobs = played(parent(), recording())
    assert render(result, blobs) == {
        "calc.py": "def add(a, b):\n    return b + a\n",
        "NOTES.md": "fixed\n",
    }


def test_the_subagent_edits_land_at_the_task_step_marked_as_the_subagent_in_its_order():
    result, blobs = played(parent(), recording())
    task_step = 2
    mine = [e for e in result.events if e.subagent is not None]
    assert [e.tool for e in mine] == ["Read", "Edit", "Write"]
    assert {e.subagent for e in mine} == {"agent-a1b2c3"}
    assert {e.step_index for e in mine} == {task_step}
    task = next(e for e in result.events if e.tool_call_id == "task_1")
    assert task.index == mine[-1].index + 1 and not task.changes
    index = StateIndex.build(result, every=2)
    assert render(index.state_at_step(task_step - 1), blobs) == {"calc.py": CALC}
    assert render(index.state_at_step(task_step), blobs) == {
        "calc.py": FIXED,
        "NOTES.md": "fixed\n",
    }


def test_without_the_subagent_recording_the_tree_after_the_task_stays_uncertain():
    result, blobs = played(parent(), None)
    assert all(e.subagent is None for e in result.events)
    state = render(StateIndex.build(result).state_at_step(2), blobs)
    assert state == {"**": UNCERTAIN, "calc.py": "<lost>"}


def test_a_recording_for_a_call_the_parent_never_made_changes_nothing():
    atif, side = child().build()
    plain, blobs = played(parent(), None)
    stray, _ = played(parent(), {"elsewhere": Subagent("agent-x", atif, side)})
    assert stray.events == plain.events


def test_the_subagents_shell_commands_change_files_but_are_not_the_parents_checks():
    sub = AtifBuilder(root=ROOT)
    sub.call("Bash", {"command": "printf 'x = 1\\n' > made.py && python -m pytest -q"}, "1 passed")
    atif, side = sub.build()
    result, blobs = played(parent(), {"task_1": Subagent("agent-a1b2c3", atif, side)})
    assert render(result, blobs)["made.py"] == "x = 1\n"
    assert result.commands == ()
    assert [e.command_index for e in result.events if e.subagent] == [None]


def test_a_subagent_launched_in_the_background_leaves_the_tree_uncertain_even_with_its_log():
    b = AtifBuilder(root=ROOT)
    b.call("Write", {"file_path": f"{ROOT}/calc.py", "content": CALC}, "File created")
    launched = "Async agent launched successfully. agentId: a1b2c3 (working in the background)"
    b.call("Task", {**TASK, "run_in_background": True}, launched, call_id="task_1")
    result, blobs = played(b, recording())
    assert all(e.subagent is None for e in result.events)
    assert render(result, blobs) == {"**": UNCERTAIN, "calc.py": "<lost>"}
