"""What resolving a script runner's check works on: the files it may read, the units it runs.

Shared by ``scripts`` (mise, just, composing the command line) and ``makefile`` (make).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

MAX_DEPTH = 6


@dataclass(frozen=True, slots=True)
class Files:
    """The project files a resolution may read: names seen, and a reader of known content.

    ``here`` is the session's folder within its repository ("go") when files above it are
    known (a clone's root ``mise.toml``, named ``../mise.toml``): mise and just look upward.
    """

    names: Collection[str]
    read: Callable[[str], bytes | None]  # None when unknown or changed between the runs
    here: str = ""

    def local(self, path: str) -> str:
        """``path`` as the session's folder sees it: ``../go/x`` is ``x`` when it is go/."""
        if not self.here or not path.startswith(".."):
            return path
        top = posixpath.normpath(posixpath.join(self.here, path))
        return posixpath.relpath(top, self.here)

    def folders_up(self, folder: str) -> Iterator[str]:
        """``folder``, the folders above it up to the session's, then those above that."""
        yield from folders_up(folder)
        for level in range(1, self.here.count("/") + 2 if self.here else 1):
            yield "/".join([".."] * level)


@dataclass(frozen=True, slots=True)
class Above:
    """Files of the repository above the session's folder, from its clone (a root mise.toml
    when the session ran in go/): ``{"../mise.toml": sha}``, and the session's folder within
    the repository ("go")."""

    files: Mapping[str, str]
    here: str


@dataclass(frozen=True, slots=True)
class Unit:
    """One shell's worth of commands: where it starts, the variables it gets, what it runs."""

    folder: str
    command: str
    env: tuple[tuple[str, str], ...] = ()


class Unresolvable(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Definition:
    units: list[Unit]
    source: str
    exports: tuple[tuple[str, str], ...] = ()  # variables every unit gets (mise [env], make export)


def folders_up(folder: str) -> Iterator[str]:
    while True:
        yield folder
        if folder in ("", "."):
            return
        folder = posixpath.dirname(folder) or "."


def join(folder: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(folder, name))
