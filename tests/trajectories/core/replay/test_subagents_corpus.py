"""Real Claude Code sessions whose Task subagents edited files, replayed with their subagent logs.

The corpus holds a session (kfischer-okarin's example project) in which a Task subagent appended
a section to ``test-file.txt`` and the parent then edited that section; the subagent's log,
``agent-a434715.jsonl``, lies beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajectories.core import formats
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import StateIndex, Subagent, is_tree, replay, spawned

pytestmark = pytest.mark.corpus

EXAMPLE = "claude-code/kfischer-okarin-scripts-and-tools/example-project"
PARENT = "b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl"
TASK_CALL = "toolu_014b1V7NgWhMapv346LFg4Y3"
NEXT_EDIT = "toolu_01Bd8XsmLMYTmEPB2N568ZeJ"  # the parent's edit of the subagent's section


def load(path: Path) -> formats.Loaded:
    loaded = formats.load(path)
    assert isinstance(loaded, formats.Loaded), loaded
    return loaded


def recordings(path: Path, parent: formats.Loaded) -> dict[str, Subagent]:
    """The subagent logs beside ``path`` (old layout) or in ``<stem>/subagents/``, by call."""
    logs = [*path.parent.glob("agent-*.jsonl"), *(path.parent / path.stem).glob("*/agent-*.jsonl")]
    by_session = {sub.meta.session_id: sub for sub in map(load, logs)}
    return {
        call_id: Subagent(name, by_session[name].atif, by_session[name].side_data)
        for call_id, name in spawned(parent.atif, parent.side_data).items()
        if name in by_session
    }


def test_a_real_subagents_edit_is_in_its_parents_replay_at_the_task_step(corpus):
    path = corpus / EXAMPLE / PARENT
    parent = load(path)
    subagents = recordings(path, parent)
    assert list(subagents) == [TASK_CALL]
    blobs = MemoryBlobs()
    result = replay(
        parent.atif, parent.side_data, root=parent.meta.cwd, blobs=blobs, subagents=subagents
    )

    theirs = [e for e in result.events if e.subagent]
    assert [(e.tool, e.subagent) for e in theirs] == [
        ("Read", "agent-a434715"),
        ("Edit", "agent-a434715"),
    ]
    assert list(theirs[-1].changes) == ["test-file.txt"]
    task_step = theirs[0].step_index
    state = StateIndex.build(result).state_at_step(task_step)
    assert not any(is_tree(key) for key in state)
    after_task = blobs.get(state["test-file.txt"].sha or "").decode()
    assert "--- Added by Task Agent ---" in after_task
    # What Claude Code itself recorded as the file before the parent's next edit.
    assert after_task == parent.side_data["tool_results"][NEXT_EDIT]["originalFile"]
    assert result.summary()["uncertain_trees"] == []


def test_without_its_subagents_log_the_same_session_leaves_the_tree_uncertain(corpus):
    parent = load(corpus / EXAMPLE / PARENT)
    result = replay(parent.atif, parent.side_data, root=parent.meta.cwd, blobs=MemoryBlobs())
    task = next(e for e in result.events if e.tool_call_id == TASK_CALL)
    assert "**" in task.changes
    assert result.summary()["uncertain_trees"] == ["."]


def test_every_corpus_session_with_a_subagent_log_replays_it_and_loses_no_tree_to_it(corpus):
    merged = 0
    for path in formats.discover([corpus / "claude-code", corpus / "evolving-skills"]):
        parent = formats.load(path)
        if not isinstance(parent, formats.Loaded) or parent.meta.is_subagent:
            continue
        subagents = recordings(path, parent)
        if not subagents:
            continue
        result = replay(
            parent.atif,
            parent.side_data,
            root=parent.meta.cwd,
            blobs=MemoryBlobs(),
            subagents=subagents,
        )
        for call_id in subagents:
            task = next(e for e in result.events if e.tool_call_id == call_id)
            assert not task.changes, path
            merged += 1
    assert merged >= 3  # kfischer's, codemie's incremental-subagents, evolving-skills' pdfminer
