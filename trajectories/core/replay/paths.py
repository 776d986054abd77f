"""Turning the paths a trajectory mentions into keys relative to the project root.

The replay is purely virtual: keys are strings, nothing here touches the real filesystem. A
path that would land outside the root (``../../etc/passwd``, ``/tmp/x``, ``~/.bashrc``) or a
Windows path (``C:\\src\\app.py``) is resolved to a flagged key that the state never stores.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

_WINDOWS = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
_HOME = re.compile(r"^(/Users/[^/]+|/home/[^/]+|/root)(?:/|$)")


def is_windows_path(raw: str) -> bool:
    # A backslash with no forward slash is a relative Windows path (`src\app.py`); POSIX file
    # names may contain backslashes, but agents do not create such names on purpose.
    return bool(_WINDOWS.match(raw)) or ("\\" in raw and "/" not in raw)


@dataclass(frozen=True, slots=True)
class Resolved:
    key: str  # relative to the root ("" is the root itself); the path as given when flagged
    abs: str | None
    windows: bool = False
    escapes: bool = False

    @property
    def flagged(self) -> bool:
        return self.windows or self.escapes


class Paths:
    """Resolution against one root; ``root`` is an absolute POSIX path ("/" when unknown)."""

    def __init__(self, root: str) -> None:
        self.root = posixpath.normpath(root) if root.startswith("/") else "/"
        self._prefix = "/" if self.root == "/" else self.root + "/"
        # `~` can be placed only when the root itself lies in a home directory.
        home = _HOME.match(self.root)
        self.home = home.group(1) if home else None

    def absolute(self, raw: str, cwd: str | None) -> str | None:
        """The absolute path ``raw`` names from ``cwd``; None when it cannot be known."""
        if raw == "~" or raw.startswith("~/"):
            if self.home is None:
                return None
            raw = self.home + raw[1:]
        if not raw or is_windows_path(raw) or raw.startswith("~"):
            return None
        base = cwd if cwd and cwd.startswith("/") else self.root
        joined = raw if raw.startswith("/") else posixpath.join(base, raw)
        # normpath keeps a leading "//"; POSIX says it is implementation-defined, we say "/".
        normal = posixpath.normpath(joined)
        return "/" + normal.lstrip("/")

    def resolve(self, raw: str, cwd: str | None) -> Resolved:
        if is_windows_path(raw):
            return Resolved(key=raw, abs=None, windows=True)
        absolute = self.absolute(raw, cwd)
        if absolute is None:
            return Resolved(key=raw, abs=None, escapes=True)
        return self.of_abs(absolute)

    def of_abs(self, absolute: str) -> Resolved:
        if absolute == self.root:
            return Resolved(key="", abs=absolute)
        if absolute.startswith(self._prefix):
            return Resolved(key=absolute[len(self._prefix) :], abs=absolute)
        return Resolved(key=absolute, abs=absolute, escapes=True)

    def relative_dir(self, absolute: str | None) -> str | None:
        """A directory as a root-relative key ("." for the root); None outside the root."""
        if absolute is None:
            return None
        resolved = self.of_abs(absolute)
        if resolved.escapes:
            return None
        return resolved.key or "."

    def tree_dir(self, absolute: str | None) -> str | None:
        """The root-relative directory a tree marker for ``absolute`` should cover.

        A directory above the root covers the whole root (a script run from the parent may
        write anywhere below it); a directory beside the root covers nothing we track.
        """
        if absolute is None:
            return ""
        if absolute == "/" or self._prefix.startswith(absolute.rstrip("/") + "/"):
            return ""
        resolved = self.of_abs(absolute)
        return None if resolved.escapes else resolved.key
