"""The replayed files as they stand during one pass, and the changes the current call made.

    state = FileState(Paths("/repo"), blobs)
    state.write(state.resolve("app.py", "/repo"), "print(1)\\n", "written")
    state.text_of(state.resolve("/repo/app.py", None))   # "print(1)\\n"
    state.changes                                        # {"app.py": Change(WRITTEN, sha, …)}

Every handler (file tools, patches, the shell walker's effects) changes files only through
these primitives, so each change lands both in the running state and in the call's ``changes``,
the order of which replays the call exactly (see ``set``). Flagged paths (outside the root,
Windows paths) are recorded as changes and never stored.

A state may start from a seed (``{path: sha}`` already in ``blobs``: a clone's tree at the
session's starting commit) instead of nothing. The log's own knowledge wins over the seed: a
seeded file that the log shows with other content before it changes the file (a full read, an
edit's recorded original) was that content at the start, so ``start`` takes it and the path is
listed in ``disagreements``. A seeded file is only vouched for until the log first touches it.

A command the replay cannot follow (``make gen``) leaves the files under its folder UNCERTAIN
with their last known content. Edits apply on that content, and what they write stays UNCERTAIN
(``Change.presumed``); a full write or a full read makes the file known again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..blobs import BlobStore
from .index import apply_value, change_value
from .model import Change, ChangeKind, Entry, Status, is_tree, tree_dir, tree_key, under
from .paths import Paths, Resolved


class FileState:
    def __init__(
        self, paths: Paths, blobs: BlobStore, seed: Mapping[str, str] | None = None
    ) -> None:
        self.paths = paths
        self.blobs = blobs
        self.start: dict[str, Entry] = {
            k: Entry(sha, Status.KNOWN) for k, sha in (seed or {}).items()
        }
        self.files: dict[str, Entry] = dict(self.start)
        self.pristine: set[str] = set(self.start)  # seeded and not yet touched by the log
        self.disagreements: list[str] = []
        self.texts: dict[str, str] = {}  # decoded contents by sha, so edits need no blob reads
        self.dirs: set[str] = set()
        self.absent: set[str] = set()  # known not to exist (deleted), so `touch` creates them
        self.changes: dict[str, Change] = {}
        # Files whose presumed (UNCERTAIN) content the current call read: what it writes from
        # them is presumed too.
        self.presumed_reads: set[str] = set()

    def start_call(self) -> None:
        """Begin recording the changes of the next call."""
        self.changes = {}
        self.presumed_reads = set()

    def resolve(self, raw: str, cwd: str | None) -> Resolved:
        return self.paths.resolve(raw, cwd)

    def text_of(self, target: Resolved) -> str | None:
        if target.flagged:
            return None
        entry = self.files.get(target.key)
        if entry is None or entry.sha is None or not entry.presumed:
            return None
        if not entry.known:
            self.presumed_reads.add(target.key)
        text = self.texts.get(entry.sha)
        if text is None:
            text = self.blobs.get(entry.sha).decode("utf-8", "surrogatepass")
            self.texts[entry.sha] = text
        return text

    def set(self, target: Resolved, change: Change) -> None:
        if target.key == "" and not target.flagged:
            return  # the root directory itself is not a file
        if target.flagged:
            change = replace(change, windows_path=target.windows, escapes_root=target.escapes)
        # Re-inserting keeps the event's changes in the order they last happened, so applying
        # them in dict order reproduces the sequence (a write after a tree loss stays known).
        self.changes.pop(target.key, None)
        self.changes[target.key] = change
        if change.flagged:
            return
        if self.pristine:
            self._leave_seed(target.key, change)
        apply_value(self.files, target.key, change_value(change))
        if change.kind is ChangeKind.DELETED:
            if is_tree(target.key):
                directory = tree_dir(target.key)
                self.dirs = {d for d in self.dirs if not (d == directory or under(d, directory))}
            else:
                self.absent.add(target.key)
        elif not is_tree(target.key):
            self.absent.discard(target.key)

    def _leave_seed(self, key: str, change: Change) -> None:
        if is_tree(key):
            directory = tree_dir(key)
            self.pristine = {k for k in self.pristine if not under(k, directory)}
            return
        if key not in self.pristine:
            return
        self.pristine.discard(key)
        # Only a read reaches here with the file unchanged by the log (a read that agrees with
        # the seed records nothing): what it saw was the file at the start.
        if change.observed and change.kind is ChangeKind.WRITTEN and change.sha:
            self.start[key] = Entry(change.sha, Status.KNOWN)
            self.disagreements.append(key)

    def write(
        self,
        target: Resolved,
        text: str,
        reason: str,
        *,
        observed: bool = False,
        presumed: bool = False,
    ) -> None:
        """``presumed``: ``text`` follows from presumed content (see ``presumed_reads``)."""
        if target.flagged:
            self.set(target, Change(ChangeKind.WRITTEN, None, reason, observed=observed))
            return
        if not observed:
            self.pristine.discard(target.key)  # the log's own bytes, even where they agree
            presumed = presumed or target.key in self.presumed_reads
        else:
            presumed = False  # a full read saw the bytes
        current = self.files.get(target.key)
        sha = self.blobs.put(text.encode("utf-8", "surrogatepass"))
        self.texts[sha] = text
        if current is not None and current.sha == sha and (current.known or presumed):
            return  # nothing new learned (a re-read, an edit that changed nothing)
        change = Change(ChangeKind.WRITTEN, sha, reason, observed=observed, presumed=presumed)
        self.set(target, change)

    def lose(self, target: Resolved, reason: str) -> None:
        self.set(target, Change(ChangeKind.LOST, reason=reason))

    def delete(self, target: Resolved) -> None:
        self.set(target, Change(ChangeKind.DELETED))

    def lose_tree(self, directory: str | None, reason: str, *, presume: bool = False) -> None:
        """Everything under ``directory`` may have changed; ``presume``: the files keep their
        last known content as UNCERTAIN (a script that only may have written), else they are
        lost (a patch, a checkout: known to rewrite)."""
        if directory is None:
            return  # outside the project
        change = Change(ChangeKind.LOST, reason=reason, presumed=presume)
        self.set(Resolved(tree_key(directory), None), change)

    def observe(self, target: Resolved, text: str | None, reason: str) -> None:
        """What a read saw: the whole file (``text``) or only a part of it (None).

        A read changes nothing on disk, so it never loses anything: a full read establishes
        content (or confirms it, recording nothing), a partial one marks a file the replay did
        not know as seen in part (recording nothing when it already was) and leaves known
        content alone.
        """
        if text is not None:
            self.write(target, text, reason, observed=True)
            return
        current = self.files.get(target.key) if not target.flagged else None
        if current is None or current.status is Status.LOST:
            self.set(target, Change(ChangeKind.PARTIAL, reason=reason, observed=True))

    def is_dir(self, key: str) -> bool | None:
        if key == "" or key in self.dirs:
            return True
        prefix = key + "/"
        if any(k.startswith(prefix) for k in self.files):
            return True
        if key in self.files:
            return False
        return None
