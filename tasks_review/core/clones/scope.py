"""A clone's tree too large to seed whole, cut down to the modules the session worked in.

    scoped = scope(entries, ["go/internal/run.go", "go"])
    scoped.entries, scoped.roots       # the files under go/ and the top's own files, ("go",)

A monorepo over the mining limits would otherwise seed nothing at all. The session's own
evidence (where its checks ran, which files it changed, from the log alone) names the paths that
matter; each is widened to its module, the nearest folder above it holding a module manifest
(go.mod, package.json, pyproject.toml …) below the top, else its top-level folder. The tree's
top-level files (a root Makefile, mise.toml, go.work) come along: the checks' runners read them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from trajectories.core.replay import ReplayResult, is_tree

from .git import TreeEntry

MODULE_MANIFESTS = frozenset(
    {
        "go.mod",
        "package.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "Cargo.toml",
        "mix.exs",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "Gemfile",
        "composer.json",
    }
)


@dataclass(frozen=True, slots=True)
class Scoped:
    entries: list[TreeEntry]
    roots: tuple[str, ...]  # the module folders kept, relative to the tree's folder

    def describe(self, whole: int) -> str:
        return (
            f"scoped to {', '.join(f'{r}/' for r in self.roots)} ({len(self.entries)} of {whole} "
            "files: the modules the session checked and changed, and the top's own files)"
        )


def scope(entries: Sequence[TreeEntry], focus: Iterable[str]) -> Scoped | None:
    """The entries of the modules ``focus`` (paths relative to the tree's folder) lies in; None
    when the focus names no folder below the top (nothing smaller than the whole tree)."""
    modules = {
        posixpath.dirname(e.path) for e in entries if posixpath.basename(e.path) in MODULE_MANIFESTS
    }
    folders = {posixpath.dirname(e.path) for e in entries}
    roots: set[str] = set()
    for raw in focus:
        path = posixpath.normpath(raw).strip("/")
        if path in ("", ".") or path.startswith(".."):
            continue
        # A file's own folder, or the folder itself when the path is one (a check's cwd).
        start = path if path in folders or _holds(folders, path) else posixpath.dirname(path)
        root = _nearest(start, modules) or start.split("/", 1)[0]
        if root:
            roots.add(root)
    kept_roots = tuple(sorted(r for r in roots if not any(_under(r, o) for o in roots if o != r)))
    if not kept_roots:
        return None
    kept = [e for e in entries if "/" not in e.path or any(_under(e.path, r) for r in kept_roots)]
    return Scoped(kept, kept_roots)


def _nearest(folder: str, modules: set[str]) -> str | None:
    """The nearest folder at or above ``folder`` (below the top) holding a module manifest."""
    while folder and folder != ".":
        if folder in modules:
            return folder
        folder = posixpath.dirname(folder)
    return None


def _holds(folders: set[str], path: str) -> bool:
    prefix = path + "/"
    return any(f.startswith(prefix) for f in folders)


def _under(path: str, folder: str) -> bool:
    return path.startswith(folder + "/")


def session_focus(result: ReplayResult) -> list[str]:
    """What a replay of the log alone says the session worked on: the folders its checks ran
    in and the files it changed (relative to its root)."""
    paths = [c.check.cwd for c in result.commands if c.check is not None and c.check.cwd]
    for event in result.events:
        for key, change in event.changes.items():
            if not (change.flagged or change.observed or is_tree(key)):
                paths.append(key)
    return paths
