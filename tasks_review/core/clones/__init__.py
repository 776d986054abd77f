"""The user's own clone of a session's project: the files the log never showed.

``git`` is the seam that reads a clone; ``overlay`` decides which clone, which commit and which
files a session starts from, for the replay to be seeded with (``replay(seed=…)``).
"""

from .git import CloneError, Repository, TreeEntry, open_repository
from .harbortask import task_folder, task_overlay
from .overlay import (
    MAX_FILE_BYTES,
    NoSeed,
    Overlay,
    Project,
    Start,
    StartKind,
    clone_for,
    clone_line,
    clone_overlay,
    is_remote,
    remote_id,
    seed_counts,
    start_commit,
)
from .scope import session_focus

__all__ = [
    "MAX_FILE_BYTES",
    "CloneError",
    "NoSeed",
    "Overlay",
    "Project",
    "Repository",
    "Start",
    "StartKind",
    "TreeEntry",
    "clone_for",
    "clone_line",
    "clone_overlay",
    "is_remote",
    "open_repository",
    "remote_id",
    "seed_counts",
    "session_focus",
    "start_commit",
    "task_folder",
    "task_overlay",
]
