"""The user's own clone of a session's project: the files the log never showed.

``git`` is the seam that reads a clone; ``overlay`` decides which clone, which commit and which
files a session starts from, for the replay to be seeded with (``replay(seed=…)``).
"""

from .git import CloneError, Repository, TreeEntry, open_repository
from .overlay import (
    MAX_FILE_BYTES,
    Overlay,
    Project,
    clone_for,
    clone_overlay,
    is_remote,
    remote_id,
    start_commit,
)

__all__ = [
    "MAX_FILE_BYTES",
    "CloneError",
    "Overlay",
    "Project",
    "Repository",
    "TreeEntry",
    "clone_for",
    "clone_overlay",
    "is_remote",
    "open_repository",
    "remote_id",
    "start_commit",
]
