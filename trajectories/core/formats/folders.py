"""The logs beside a log, listed once per folder.

atif-make links a session to the sessions it spawned by looking beside it, once
for every file it converts:

* a Claude Code transcript globs ``*.jsonl`` in its folder and resolves every
  match, to find teammates (and links none when there are more than
  ``TEAM_CAP``); a folder of 5,000 sessions made each conversion 170 times
  slower than the same file alone, and a whole folder quadratic;
* a Codex rollout globs ``rollout-*.jsonl`` and reads the header of every match,
  to find the threads whose ``parent_thread_id`` names it.

A ``Folders`` index does that listing once per folder and keeps it for the
whole batch. From it the converter decides which neighbours atif-make needs to
see (none, for a Claude Code folder past the cap; a rollout's own descendants,
for Codex) and shows it only those, so its result is the same and each
conversion costs what the file costs.

    >>> folders = Folders()
    >>> folders.logs(Path("/nonexistent"))
    ()
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model import HarborTrial
from .trial import harbor_trial

# atif-make's `parsers.claude_code._TEAM_CAP`; a test holds the two equal.
TEAM_CAP = 200
# Below this many rollouts beside it, atif-make's own look at its neighbours is cheaper than
# building a view of the folder.
CODEX_DIRECT = 32
# atif-make's `_rollout_meta` looks for `session_meta` among a rollout's first nine objects.
HEADER_OBJECTS = 9


@dataclass(frozen=True, slots=True)
class RolloutHeader:
    name: str
    id: str | None
    parent_thread_id: str | None


class Folders:
    """What each folder of a batch holds, read once and shared by every file in it.

    Not thread-safe: one batch, one thread (a worker runs one ingest at a time).
    """

    def __init__(self) -> None:
        self._logs: dict[str, tuple[str, ...]] = {}
        self._members: dict[str, frozenset[str]] = {}
        self._headers: dict[str, dict[str, RolloutHeader]] = {}
        self._children: dict[str, dict[str, list[str]]] = {}
        self._trials: dict[str, HarborTrial | None] = {}

    def logs(self, folder: Path) -> tuple[str, ...]:
        """The names in ``folder`` that ``*.jsonl`` matches (as atif-make's glob), sorted."""
        key = os.path.abspath(folder)
        found = self._logs.get(key)
        if found is None:
            try:
                with os.scandir(key) as entries:
                    found = tuple(sorted(e.name for e in entries if e.name.endswith(".jsonl")))
            except OSError:
                found = ()
            self._logs[key] = found
        return found

    def others(self, path: Path) -> int:
        """How many of the names ``logs`` lists beside ``path`` are not ``path`` itself."""
        key = os.path.abspath(path.parent)
        members = self._members.get(key)
        if members is None:
            members = self._members[key] = frozenset(self.logs(path.parent))
        return len(members) - (path.name in members)

    def rollouts(self, folder: Path) -> dict[str, RolloutHeader]:
        """Every ``rollout-*.jsonl`` in ``folder`` with its ``session_meta`` header, by name."""
        key = os.path.abspath(folder)
        found = self._headers.get(key)
        if found is None:
            found = {
                name: _header(Path(key) / name)
                for name in self.logs(folder)
                if fnmatch.fnmatchcase(name, "rollout-*.jsonl")
            }
            self._headers[key] = found
        return found

    def codex_descendants(self, path: Path, own_id: str | None) -> list[str]:
        """Names of the rollouts beside ``path`` spawned by it, at any depth, in a stable order.

        atif-make reads them recursively (a thread's threads are siblings too); with only
        these in view it finds exactly what it would have found in the whole folder.
        """
        if not own_id:
            return []
        key = os.path.abspath(path.parent)
        children = self._children.get(key)
        if children is None:
            children = {}
            for header in self.rollouts(path.parent).values():
                # atif-make takes a thread only when its header names its own id.
                if header.parent_thread_id is not None and header.id is not None:
                    children.setdefault(header.parent_thread_id, []).append(header.name)
            self._children[key] = children
        headers = self.rollouts(path.parent)
        found: list[str] = []
        seen = {path.name}
        waiting = [own_id]
        while waiting:
            for name in children.get(waiting.pop(0), ()):
                if name in seen:
                    continue
                seen.add(name)
                found.append(name)
                waiting.append(headers[name].id or "")
        return sorted(found)

    def codex_thread_file(self, folder: Path, thread: str) -> str | None:
        """The first rollout in ``folder`` named for ``thread`` (``rollout-*<thread>.jsonl``)."""
        suffix = f"{thread}.jsonl"
        pattern = f"rollout-*{glob.escape(thread)}.jsonl"
        for name in self.logs(folder):
            if name.endswith(suffix) and fnmatch.fnmatchcase(name, pattern):
                return name
        return None

    def harbor_trial(self, path: Path) -> HarborTrial | None:
        """The Harbor trial ``path`` sits in (see ``trial.harbor_trial``), once per folder."""
        key = os.path.abspath(path.parent)
        if key not in self._trials:
            self._trials[key] = harbor_trial(path)
        return self._trials[key]


def _header(path: Path) -> RolloutHeader:
    meta = _session_meta(path)
    own = meta.get("id")
    parent = meta.get("parent_thread_id")
    return RolloutHeader(
        name=path.name,
        id=own if isinstance(own, str) else None,
        parent_thread_id=parent if isinstance(parent, str) else None,
    )


def _session_meta(path: Path) -> dict[str, Any]:
    """The first ``session_meta`` payload among the first objects, as atif-make reads it."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            for line in _objects(handle):
                if line.get("type") == "session_meta":
                    payload = line.get("payload")
                    return payload if isinstance(payload, dict) else {}
    except OSError:
        return {}
    return {}


def _objects(lines: Iterable[str]) -> Iterable[dict[str, Any]]:
    count = 0
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            yield value
            count += 1
            if count >= HEADER_OBJECTS:
                return
