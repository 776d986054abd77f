"""Replay: rebuild a project's files at every tool call of a trajectory, framework-free.

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import StateIndex, replay

result = replay(atif, side_data, root=meta_cwd, blobs=MemoryBlobs())
index = StateIndex.build(result)
index.state_at_step(42)        # {path: Entry(sha, status)} after step 42
index.diff(42)                 # what step 42 changed
result.summary()               # files known/lost, commands, checks with exit codes

A subagent's recording plays where its spawning call returned (``subagents.py``):
replay(atif, side_data, root=…, blobs=…, subagents={call_id: Subagent(…)}).
"""

from .engine import replay
from .index import FileDiff, StateIndex, event_after_step, locate, state_from
from .model import (
    Change,
    ChangeKind,
    Check,
    CheckKind,
    Entry,
    Event,
    ReplayResult,
    ShellCommand,
    Status,
    is_tree,
    tree_dir,
)
from .subagents import Subagent, spawned

__all__ = [
    "Change",
    "ChangeKind",
    "Check",
    "CheckKind",
    "ShellCommand",
    "Entry",
    "Event",
    "FileDiff",
    "ReplayResult",
    "event_after_step",
    "StateIndex",
    "Status",
    "Subagent",
    "is_tree",
    "locate",
    "replay",
    "spawned",
    "state_from",
    "tree_dir",
]
