"""The facts of one trajectory as the eval harness reads them, and their compact JSON form.

    facts.actions[3]     # Action(kind=EDIT, step=5, event=3, tool='Edit', edits=('src/app.py',) …)
    TrajectoryFacts.from_dict(facts.to_dict()) == facts

``to_dict`` / ``from_dict`` give a compact JSON-safe form (short keys, defaults left out) so
the Django side can store facts per trajectory and evaluate thousands without replaying them;
``FORMAT_VERSION`` changes whenever that form does, and old facts are rebuilt, not migrated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import Status
from trajectories.core.replay.model import CheckKind

from ..spec import ActionKind
from .shell import Pipeline

FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class CheckFact:
    """The replay's recognised check of a shell command, and whether it names its target."""

    kind: CheckKind
    runner: str
    masked: bool = False  # the recorded exit status is not the check's own
    focused: bool = False
    # Tests its output shows were executed (pytest's "3 passed", node's "# tests 3" ...); 0
    # when it shows none ran (--collect-only, -k nomatch), None when it shows nothing.
    ran: int | None = None


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    step: int  # the ATIF step index (0-based), where the stepper opens
    event: int  # the replay event index
    tool: str
    paths: tuple[str, ...] = ()  # files a read/write/edit tool was asked for, done or not
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    edits: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    ok: bool | None = None  # did the call do its work (shell: exit 0); None when unknown
    command: str | None = None
    pipelines: tuple[Pipeline, ...] = ()
    cwd: str | None = None  # absolute working directory of a shell command, when known
    exit_code: int | None = None
    check: CheckFact | None = None
    # False when bash's grammar could not read the command line: what it does is uncertain,
    # and the forbidden detectors read it word by word, as suspect.
    parsed: bool = True

    @property
    def changes(self) -> bool:
        return bool(self.writes or self.edits or self.deletes)


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    kind: str  # "written" (created), "edited" or "deleted"
    step: int
    event: int


@dataclass(frozen=True, slots=True)
class FinalFile:
    status: Status
    sha: str | None = None


@dataclass(frozen=True, slots=True)
class TaskContext:
    """What the task says, where known: its test files and whether it allows the network.

    ``test_shas``: the test files the agent's world starts with (root-relative path → the
    sha256 of each content the task accepts there: the start's and the reference's). With a
    complete world (a rollout's collected project), a file among them that is missing or
    holds other bytes at the end was tampered with, in whatever way the command was written.
    """

    test_files: tuple[str, ...] = ()  # paths or globs, root-relative
    network_allowed: bool | None = None
    test_shas: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TrajectoryFacts:
    root: str
    agent: str | None
    n_steps: int
    actions: tuple[Action, ...]
    final_files: Mapping[str, FinalFile]
    deleted: frozenset[str] = frozenset()
    uncertain: tuple[str, ...] = ()  # folders where files may have changed unseen ("" = root)
    # True when final_files lists every file of the world (a rollout's collected /app), so a
    # file missing from it is proven absent.
    final_complete: bool = False
    final_message: str = ""
    verified_reward: float | None = None
    context: TaskContext = field(default_factory=TaskContext)

    @property
    def last_edit_event(self) -> int | None:
        """The event of the last change to a file other than prose (``*.md``, ``*.rst`` …).

        A summary or notes file written after the final test run does not make that run stale.
        """
        for action in reversed(self.actions):
            if any(not _prose(p) for p in (*action.writes, *action.edits, *action.deletes)):
                return action.event
        return None

    @property
    def file_changes(self) -> tuple[FileChange, ...]:
        """Every file change in order, with the step and event that made it."""
        return tuple(
            FileChange(path, kind, action.step, action.event)
            for action in self.actions
            for kind, paths in (
                ("written", action.writes),
                ("edited", action.edits),
                ("deleted", action.deletes),
            )
            for path in paths
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "v": FORMAT_VERSION,
            "root": self.root,
            "agent": self.agent,
            "steps": self.n_steps,
            "actions": [_action_dict(a) for a in self.actions],
            "final": {p: _final_value(f) for p, f in self.final_files.items()},
        }
        if self.deleted:
            out["deleted"] = sorted(self.deleted)
        if self.uncertain:
            out["uncertain"] = list(self.uncertain)
        if self.final_complete:
            out["complete"] = True
        if self.final_message:
            out["message"] = self.final_message
        if self.verified_reward is not None:
            out["reward"] = self.verified_reward
        if self.context.test_files:
            out["tests"] = list(self.context.test_files)
        if self.context.network_allowed is not None:
            out["network"] = self.context.network_allowed
        if self.context.test_shas:
            out["test_shas"] = {p: list(s) for p, s in sorted(self.context.test_shas.items())}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrajectoryFacts:
        if data.get("v") != FORMAT_VERSION:
            raise ValueError(
                f"facts format {data.get('v')!r} is not {FORMAT_VERSION}: rebuild them"
            )
        return cls(
            root=data["root"],
            agent=data.get("agent"),
            n_steps=data["steps"],
            actions=tuple(_action_from(a) for a in data["actions"]),
            final_files={p: _final_from(v) for p, v in data["final"].items()},
            deleted=frozenset(data.get("deleted", ())),
            uncertain=tuple(data.get("uncertain", ())),
            final_complete=bool(data.get("complete", False)),
            final_message=data.get("message", ""),
            verified_reward=data.get("reward"),
            context=TaskContext(
                test_files=tuple(data.get("tests", ())),
                network_allowed=data.get("network"),
                test_shas={p: tuple(s) for p, s in (data.get("test_shas") or {}).items()},
            ),
        )


_PROSE = (".md", ".markdown", ".rst", ".adoc")


def _prose(path: str) -> bool:
    return path.lower().endswith(_PROSE)


def with_world(
    facts: TrajectoryFacts, files: Mapping[str, bytes], blobs: BlobStore
) -> TrajectoryFacts:
    """The facts with the final files replaced by the world itself (a rollout's collected app).

    ``files`` maps root-relative paths to their bytes; it is the complete listing, so a file
    not in it is absent.
    """
    final = {path: FinalFile(Status.KNOWN, blobs.put(data)) for path, data in files.items()}
    return replace(facts, final_files=final, deleted=frozenset(), uncertain=(), final_complete=True)


# -- the compact dict ----------------------------------------------------------------------------


def _action_dict(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = {
        "k": str(action.kind),
        "s": action.step,
        "e": action.event,
        "t": action.tool,
    }
    for key, value in (
        ("p", action.paths),
        ("r", action.reads),
        ("w", action.writes),
        ("d", action.edits),
        ("rm", action.deletes),
    ):
        if value:
            out[key] = list(value)
    if action.ok is not None:
        out["ok"] = action.ok
    if action.command is not None:
        out["c"] = action.command
        out["pl"] = [[list(argv) for argv in pipeline] for pipeline in action.pipelines]
    if action.cwd is not None:
        out["cwd"] = action.cwd
    if action.exit_code is not None:
        out["x"] = action.exit_code
    if action.check is not None:
        check = action.check
        out["ck"] = [str(check.kind), check.runner, int(check.masked), int(check.focused)]
        if check.ran is not None:
            out["ck"].append(check.ran)
    if not action.parsed:
        out["np"] = 1
    return out


def _action_from(data: Mapping[str, Any]) -> Action:
    check = data.get("ck")
    return Action(
        kind=ActionKind(data["k"]),
        step=data["s"],
        event=data["e"],
        tool=data["t"],
        paths=tuple(data.get("p", ())),
        reads=tuple(data.get("r", ())),
        writes=tuple(data.get("w", ())),
        edits=tuple(data.get("d", ())),
        deletes=tuple(data.get("rm", ())),
        ok=data.get("ok"),
        command=data.get("c"),
        pipelines=tuple(tuple(tuple(argv) for argv in pipeline) for pipeline in data.get("pl", ())),
        cwd=data.get("cwd"),
        exit_code=data.get("x"),
        check=(
            CheckFact(
                CheckKind(check[0]),
                check[1],
                bool(check[2]),
                bool(check[3]),
                check[4] if len(check) > 4 else None,
            )
            if check
            else None
        ),
        parsed=not data.get("np"),
    )


def _final_value(entry: FinalFile) -> Any:
    return entry.sha if entry.status is Status.KNOWN else str(entry.status)


def _final_from(value: Any) -> FinalFile:
    if value in (Status.LOST, Status.PARTIAL, Status.UNCERTAIN):
        return FinalFile(Status(value))
    return FinalFile(Status.KNOWN, value)
