"""What a replay produces: events with the file changes they made, commands and checks.

Everything here is a frozen dataclass of plain values so a replay can be cached, compared in
tests and turned into JSON without knowing about the engine that built it.

Paths are keys relative to the project root (``src/app.py``). A key ending in ``**`` is a tree
marker: ``src/**`` (or ``**`` for the whole root) says that files under that directory may have
changed in ways the trajectory does not show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

TREE = "**"


def tree_key(directory: str) -> str:
    """The marker key for everything under ``directory`` ("" or "." is the root)."""
    return TREE if directory in ("", ".") else f"{directory}/{TREE}"


def is_tree(key: str) -> bool:
    return key == TREE or key.endswith("/" + TREE)


def tree_dir(key: str) -> str:
    """The directory a tree marker covers ("" for the root)."""
    return "" if key == TREE else key[: -len(TREE) - 1]


def under(key: str, directory: str) -> bool:
    """Whether ``key`` lies inside ``directory`` ("" is the root and holds everything)."""
    return directory == "" or key.startswith(directory + "/")


class ChangeKind(StrEnum):
    WRITTEN = "written"  # content known after the event (sha set)
    DELETED = "deleted"
    LOST = "lost"  # something changed the file in a way the trajectory does not show
    PARTIAL = "partial"  # only part of the content was seen (a ranged or truncated read)


class Status(StrEnum):
    KNOWN = "known"
    LOST = "lost"
    PARTIAL = "partial"
    # Last known as ``sha``; a command since (``make gen``, a sourced script) may have changed
    # it. Not ``known``: only readers that say what they presume use the content.
    UNCERTAIN = "uncertain"


@dataclass(frozen=True, slots=True)
class Change:
    kind: ChangeKind
    sha: str | None = None
    reason: str = ""
    # Flagged changes are recorded on the event but never applied to the state: the replay
    # never writes a Windows path or anything outside the project root.
    windows_path: bool = False
    escapes_root: bool = False
    # A read's record of what it saw (Read tools, shell reads such as `cat f`): the file was
    # only looked at, so ``sha`` (read in full) or PARTIAL was already the content on disk.
    observed: bool = False
    # WRITTEN on a presumed base (an edit of an UNCERTAIN file): the file stays UNCERTAIN.
    presumed: bool = False

    @property
    def flagged(self) -> bool:
        return self.windows_path or self.escapes_root


@dataclass(frozen=True, slots=True)
class Entry:
    """One file in the state at some point: its content hash when known."""

    sha: str | None
    status: Status

    @property
    def known(self) -> bool:
        return self.status is Status.KNOWN

    @property
    def presumed(self) -> bool:
        """Known, or uncertain with the last known content: what a seeded start may rely on
        when something later (the check in the image) judges it."""
        return self.sha is not None and self.status in (Status.KNOWN, Status.UNCERTAIN)


class CheckKind(StrEnum):
    TEST = "test"
    BUILD = "build"
    LINT = "lint"
    TYPECHECK = "typecheck"


@dataclass(frozen=True, slots=True)
class Check:
    kind: CheckKind
    language: str | None  # python, node, go, rust, … or None when the runner does not say
    runner: str  # pytest, npm, vitest, go, cargo, make, …
    segment: str  # the part of the command line that is the check
    cwd: str | None  # where the check ran, relative to the root ("." is the root)
    target: str | None = None  # npm script / make target when the runner takes one
    # The command's recorded exit status is not the check's own: its output went through a
    # pipe without pipefail, or a later `;` / `||` command decided the status.
    masked: bool = False


@dataclass(frozen=True, slots=True)
class ShellCommand:
    index: int
    event_index: int
    step_index: int
    step_id: Any
    tool_call_id: str
    command: str
    cwd: str | None  # relative to the root ("." is the root); None outside it or unknown
    cwd_abs: str | None
    output: str
    exit_code: int | None
    check: Check | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """One tool call and the file changes it made."""

    index: int
    step_index: int
    step_id: Any
    tool_call_id: str
    tool: str
    changes: Mapping[str, Change] = field(default_factory=dict)
    command_index: int | None = None
    # The session id of the subagent that made this call, played at the step of the parent's
    # call that spawned it (``step_index``); None for the trajectory's own calls.
    subagent: str | None = None


@dataclass(frozen=True, slots=True)
class ReplayResult:
    root: str
    agent: str | None
    step_ids: tuple[Any, ...]
    events: tuple[Event, ...]
    commands: tuple[ShellCommand, ...]
    final_state: Mapping[str, Entry]
    # The files before the first call: empty, unless the replay was seeded with a project's
    # known starting tree (a clone's commit, ``replay(seed=…)``), each seeded file the log
    # showed with other content before changing it being given the log's content.
    start: Mapping[str, Entry] = field(default_factory=dict)
    # Those seeded files the log showed otherwise (the user's uncommitted changes, say).
    seed_disagreements: tuple[str, ...] = ()

    @property
    def n_steps(self) -> int:
        return len(self.step_ids)

    @property
    def checks(self) -> tuple[ShellCommand, ...]:
        return tuple(c for c in self.commands if c.check is not None)

    def summary(self) -> dict[str, Any]:
        """The facts `manage.py replay --json` prints, JSON-safe."""
        files = {k: e for k, e in self.final_state.items() if not is_tree(k)}
        return {
            "root": self.root,
            "agent": self.agent,
            "steps": self.n_steps,
            "events": len(self.events),
            "files_known": sum(1 for e in files.values() if e.status is Status.KNOWN),
            "files_lost": sum(1 for e in files.values() if e.status is Status.LOST),
            "files_partial": sum(1 for e in files.values() if e.status is Status.PARTIAL),
            "files_uncertain": sum(1 for e in files.values() if e.status is Status.UNCERTAIN),
            "uncertain_trees": sorted(tree_dir(k) or "." for k in self.final_state if is_tree(k)),
            "commands": len(self.commands),
            "checks": [
                {
                    "step": c.step_index,
                    "event": c.event_index,
                    "command": c.command,
                    "cwd": c.check.cwd,
                    "exit_code": c.exit_code,
                    "kind": str(c.check.kind),
                    "language": c.check.language,
                    "runner": c.check.runner,
                    "masked": c.check.masked,
                }
                for c in self.checks
                if c.check is not None
            ],
        }
