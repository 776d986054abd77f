"""The effect model: what one shell command did to files, as the replay applies it.

A handler emits effects to a ``Files`` sink (the engine) as soon as it knows them, so a later
command in the same line sees what an earlier one wrote. Paths are absolute; content ``None``
means written with content the replay cannot know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Write:
    path: str  # absolute
    content: str | None  # None: written with content we cannot know
    append: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Delete:
    path: str
    recursive: bool = False


@dataclass(frozen=True, slots=True)
class GlobEffect:
    pattern: str  # absolute shell pattern
    delete: bool  # True: matching files are removed; False: they may have changed
    reason: str = ""
    recursive: bool = False  # matching directories are affected with everything below them


@dataclass(frozen=True, slots=True)
class Move:
    src: str
    dst: str
    into_dir: bool = False  # the destination is known to be a directory (trailing /, -t, many)


@dataclass(frozen=True, slots=True)
class Copy:
    src: str
    dst: str
    into_dir: bool = False
    recursive: bool = False


@dataclass(frozen=True, slots=True)
class LostTree:
    directory: str | None  # absolute; None when it cannot be known (the whole root)
    reason: str
    # The command is known to rewrite what lies there (git checkout, an archive, a patch the
    # replay cannot read): nothing under it keeps its last known content. Otherwise (a script,
    # `make gen`) the files only may have changed, and keep it as a presumption.
    rewrites: bool = False


@dataclass(frozen=True, slots=True)
class MakeDir:
    path: str


@dataclass(frozen=True, slots=True)
class Touch:
    path: str


@dataclass(frozen=True, slots=True)
class CodexPatch:
    text: str
    base: str | None


@dataclass(frozen=True, slots=True)
class UnifiedPatch:
    text: str | None  # None: the patch content is not in the trajectory
    base: str | None
    strip: int


Effect = (
    Write
    | Delete
    | GlobEffect
    | Move
    | Copy
    | LostTree
    | MakeDir
    | Touch
    | CodexPatch
    | UnifiedPatch
)


class Files(Protocol):
    """The replay's view of the files while a command line runs."""

    def text(self, path: str) -> str | None: ...

    def is_dir(self, path: str) -> bool | None:
        """True for a directory, False for a file, None when the replay cannot tell."""
        ...

    def apply(self, effect: Effect) -> None: ...

    def absolute(self, raw: str, cwd: str | None) -> str | None: ...
