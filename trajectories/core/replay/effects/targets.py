"""From words to effects: a handler's vocabulary for the files a command names.

A literal word resolves to an absolute path; an unquoted glob becomes a pattern over the files the
replay knows; anything else (``$OUT``, ``$(pwd)/x``) cannot be resolved, and then its literal
directory prefix becomes uncertain rather than the replay guessing a path.
"""

from __future__ import annotations

import posixpath
import re

from ..shell import Word
from .model import Delete, Effect, Files, GlobEffect, LostTree, Write


class Targets:
    def __init__(self, files: Files) -> None:
        self.files = files

    def emit(self, effect: Effect) -> None:
        self.files.apply(effect)

    def path(self, word: Word | None, cwd: str | None) -> str | None:
        if word is None or not (word.literal or (word.tilde and not word.expands)):
            return None
        if not word.value:
            return None
        if not word.value.startswith(("/", "~")) and cwd is None:
            return None  # relative to a directory we lost track of
        return self.files.absolute(word.value, cwd)

    def remove(self, word: Word, cwd: str | None, recursive: bool) -> None:
        path = self.path(word, cwd)
        if path is not None:
            self.emit(Delete(path, recursive=recursive))
        elif word.glob and not (word.expands or word.brace) and cwd is not None:
            pattern = self.files.absolute(word.value, cwd)
            if pattern is not None:
                self.emit(GlobEffect(pattern, True, "removed by a glob", recursive))
        else:
            self.unknown_target(word, cwd, "removed a path the replay cannot resolve")

    def lose(self, word: Word, cwd: str | None, reason: str) -> None:
        path = self.path(word, cwd)
        if path is not None:
            self.emit(Write(path, None, reason=reason))
        elif word.glob and not (word.expands or word.brace) and cwd is not None:
            pattern = self.files.absolute(word.value, cwd)
            if pattern is not None:
                self.emit(GlobEffect(pattern, delete=False, reason=reason))
        else:
            self.unknown_target(word, cwd, reason)

    def lose_all(self, words: list[Word] | None, cwd: str | None, reason: str) -> None:
        if not words:
            self.emit(LostTree(cwd, reason, rewrites=True))
            return
        for w in words:
            self.lose_path(w, cwd, reason)

    def lose_path(self, word: Word, cwd: str | None, reason: str) -> None:
        """Lose a file or a whole directory, whichever ``word`` names."""
        path = self.path(word, cwd)
        if path is None:
            self.lose(word, cwd, reason)
            return
        kind = self.files.is_dir(path)
        # With nothing known about the path, no extension suggests a directory of sources.
        if kind or (kind is None and not posixpath.splitext(path)[1]):
            self.emit(LostTree(path, reason, rewrites=True))  # named: rewritten, like a file
        else:
            self.emit(Write(path, None, reason=reason))

    def lose_named(self, cwd: str | None, names: list[str], reason: str) -> None:
        for name in names:
            path = self.files.absolute(name, cwd) if cwd else None
            if path is None:
                self.emit(LostTree(None, reason))
            else:
                self.emit(Write(path, None, reason=reason))

    def unknown_target(self, word: Word, cwd: str | None, reason: str) -> None:
        """A target we cannot resolve: its literal directory prefix becomes uncertain."""
        if word.tilde and not word.expands:
            return  # a home directory the replay cannot place lies outside the project
        prefix = re.split(r"[$`*?\[{]", word.raw, maxsplit=1)[0]
        directory = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        if word.raw.startswith(("$", "`", '"$')) or cwd is None and not prefix.startswith("/"):
            self.emit(LostTree(None, reason))
            return
        self.emit(LostTree(self.files.absolute(directory or ".", cwd), reason))
