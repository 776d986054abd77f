"""What the eval harness scores: the facts of one trajectory, taken from its replay.

result = replay(atif, side_data, root=root, blobs=blobs)
facts = build_facts(atif, side_data, result, verified_reward=1.0,
                    context=TaskContext(test_files=("tests/test_app.py",), network_allowed=False))
facts.actions[3]     # Action(kind=EDIT, step=5, event=3, tool='Edit', edits=('src/app.py',) …)
TrajectoryFacts.from_dict(facts.to_dict()) == facts

Every tool call becomes one ``Action`` (a Codex code-mode ``exec`` that ran several commands
becomes one per command), normalised across harnesses: Claude Code Read/Write/Edit/MultiEdit/
Bash, Codex shell/exec_command/apply_patch, pi read/write/edit/bash, Harbor agents' ATIF. The
tool names are read by the replay's own ``classify`` so the two can never disagree.

What an action did comes from the replay, not from what the agent said it did:

- ``reads``: files a read tool showed, or a reading program (``cat``, ``head``, ``sed -n``,
  ``grep`` …) printed from, in whole or in part, in a shell command that did not fail.
- ``writes`` / ``edits``: the files the replay saw the call change, split by whether the file
  was known to exist before (an overwrite, an in-place edit, a deletion or a change whose
  content the replay lost is an edit; creating a file is a write). Tree markers (``python
  x.py`` may write anything) are uncertainty, not edits.
- shell commands keep the command line, its simple commands as argv lists grouped by pipeline
  (``sh -c`` scripts and ``$(…)`` / ``<(…)`` substitutions expanded, a substitution fed to a
  shell written as a pipeline into it), the working directory, the exit status and the
  replay's recognised check.

Paths inside the project are root-relative keys (``src/app.py``); paths outside it are
absolute (``/etc/hosts``) or, when the replay cannot place ``~``, kept as written (``~/.ssh``).

``to_dict`` / ``from_dict`` give a compact JSON-safe form (short keys, defaults left out) so
the Django side can store facts per trajectory and evaluate thousands without replaying them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ChangeKind, ReplayResult, ShellCommand, Status, replay
from trajectories.core.replay.engine import collect_calls
from trajectories.core.replay.model import CheckKind, Event, is_tree, tree_dir
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.programs import basename, python_module, unwrap
from trajectories.core.replay.results import Outcome, content_text, tool_status
from trajectories.core.replay.shell import SimpleCommand, parse
from trajectories.core.replay.tools import (
    ChangeListOp,
    CodexPatchOp,
    DeleteOp,
    EditOp,
    InsertOp,
    LostOp,
    Op,
    ReadOp,
    ShellOp,
    WriteOp,
    classify,
)

from .spec import ActionKind

FORMAT_VERSION = 1
# The claim of success sits in the closing lines; the whole of a long final message is not
# worth storing for 10,000 trajectories.
FINAL_MESSAGE_CHARS = 4000

Argv = tuple[str, ...]
Pipeline = tuple[Argv, ...]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"})
# Programs that print (or copy out) the files they are given.
READERS = frozenset(
    "cat tac less more most head tail bat batcat nl sed awk gawk strings xxd od hexdump base64 "
    "view vim vi nano jq yq source . grep egrep fgrep rg ag".split()
)
# Readers whose first operand is a script or pattern, not a file.
_SCRIPTED = frozenset("sed awk gawk jq yq grep egrep fgrep rg ag".split())
_SUBSTITUTION = re.compile(r"\$\(|<\(|>\(|`")


@dataclass(frozen=True, slots=True)
class CheckFact:
    """The replay's recognised check of a shell command, and whether it names its target."""

    kind: CheckKind
    runner: str
    masked: bool = False  # the recorded exit status is not the check's own
    focused: bool = False


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
    """What the task says, where known: its test files and whether it allows the network."""

    test_files: tuple[str, ...] = ()  # paths or globs, root-relative
    network_allowed: bool | None = None


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
                test_files=tuple(data.get("tests", ())), network_allowed=data.get("network")
            ),
        )


_PROSE = (".md", ".markdown", ".rst", ".adoc")


def _prose(path: str) -> bool:
    return path.lower().endswith(_PROSE)


def facts_of(
    atif: Mapping[str, Any],
    side_data: Mapping[str, Any] | None,
    *,
    root: str | None,
    blobs: BlobStore,
    verified_reward: float | None = None,
    context: TaskContext | None = None,
) -> TrajectoryFacts:
    """Replay ``atif`` and build its facts in one call."""
    result = replay(atif, side_data, root=root, blobs=blobs)
    return build_facts(atif, side_data, result, verified_reward=verified_reward, context=context)


def build_facts(
    atif: Mapping[str, Any],
    side_data: Mapping[str, Any] | None,
    result: ReplayResult,
    *,
    verified_reward: float | None = None,
    context: TaskContext | None = None,
) -> TrajectoryFacts:
    """The facts of a trajectory from its ATIF and the replay of that same ATIF."""
    side = side_data or {}
    steps = [s for s in (atif.get("steps") or []) if isinstance(s, Mapping)]
    tool_results = side.get("tool_results")
    calls = collect_calls(steps, tool_results if isinstance(tool_results, Mapping) else {})
    if len(calls) != len(result.events):
        raise ValueError(
            f"the replay has {len(result.events)} events for {len(calls)} tool calls: "
            "it was not made from this ATIF"
        )
    side_cwd = side.get("cwd") if isinstance(side.get("cwd"), Mapping) else {}
    paths = Paths(result.root)
    commands: dict[int, list[ShellCommand]] = {}
    for command in result.commands:
        commands.setdefault(command.event_index, []).append(command)
    present: set[str] = set()
    actions: list[Action] = []
    for call, event in zip(calls, result.events, strict=True):
        op = classify(call.name, call.args, result.agent)
        writes, edits, deletes = _changes(event, present)
        recorded_cwd = side_cwd.get(call.tool_call_id) if isinstance(side_cwd, Mapping) else None
        cwd = recorded_cwd if isinstance(recorded_cwd, str) else result.root
        ran = commands.get(event.index, [])
        if ran:
            for i, command in enumerate(ran):
                first = i == 0
                actions.append(
                    _shell_action(
                        command,
                        event,
                        call.name,
                        paths,
                        (writes, edits, deletes) if first else ((), (), ()),
                    )
                )
            continue
        outcome = tool_status(call.result, patch=isinstance(op, CodexPatchOp | ChangeListOp))
        ok = {Outcome.OK: True, Outcome.FAILED: False, Outcome.NOT_RUN: False}.get(outcome)
        named = tuple(paths.resolve(p, cwd).key for p in _op_paths(op))
        kind = _kind(op)
        actions.append(
            Action(
                kind=kind,
                step=event.step_index,
                event=event.index,
                tool=call.name,
                paths=named,
                reads=named if kind is ActionKind.READ and ok is not False else (),
                writes=writes,
                edits=edits,
                deletes=deletes,
                ok=ok,
            )
        )
    final_files = {
        key: FinalFile(entry.status, entry.sha)
        for key, entry in result.final_state.items()
        if not is_tree(key)
    }
    deleted = frozenset(
        key
        for event in result.events
        for key, change in event.changes.items()
        if change.kind is ChangeKind.DELETED and not is_tree(key) and key not in final_files
    )
    return TrajectoryFacts(
        root=result.root,
        agent=result.agent,
        n_steps=result.n_steps,
        actions=tuple(actions),
        final_files=final_files,
        deleted=deleted,
        uncertain=tuple(sorted(tree_dir(k) for k in result.final_state if is_tree(k))),
        final_message=final_message(steps),
        verified_reward=verified_reward,
        context=context or TaskContext(),
    )


def with_world(
    facts: TrajectoryFacts, files: Mapping[str, bytes], blobs: BlobStore
) -> TrajectoryFacts:
    """The facts with the final files replaced by the world itself (a rollout's collected app).

    ``files`` maps root-relative paths to their bytes; it is the complete listing, so a file
    not in it is absent.
    """
    final = {path: FinalFile(Status.KNOWN, blobs.put(data)) for path, data in files.items()}
    return replace(facts, final_files=final, deleted=frozenset(), uncertain=(), final_complete=True)


def final_message(steps: Sequence[Mapping[str, Any]]) -> str:
    """The agent's last words: the text of the last agent step that has any."""
    for step in reversed(steps):
        if step.get("source") != "agent":
            continue
        text = content_text(step.get("message")).strip()
        if text:
            return text[-FINAL_MESSAGE_CHARS:]
    return ""


# -- one call ------------------------------------------------------------------------------------


def _kind(op: Op) -> ActionKind:
    if isinstance(op, ShellOp):
        return ActionKind.SHELL
    if isinstance(op, ReadOp):
        return ActionKind.READ
    if isinstance(op, WriteOp):
        return ActionKind.WRITE
    if isinstance(op, EditOp | InsertOp | CodexPatchOp | ChangeListOp | DeleteOp):
        return ActionKind.EDIT
    if isinstance(op, LostOp) and op.path is not None:
        return ActionKind.EDIT  # a notebook edit, an undo: it changed a named file
    return ActionKind.OTHER


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def _op_paths(op: Op) -> list[str]:
    if isinstance(op, ReadOp | WriteOp | EditOp | InsertOp | DeleteOp):
        return [op.path]
    if isinstance(op, LostOp):
        return [op.path] if op.path is not None else []
    if isinstance(op, CodexPatchOp):
        return [(a or b).strip() for a, b in _PATCH_FILE.findall(op.text)]
    if isinstance(op, ChangeListOp):
        return [path for path, _ in op.changes]
    return []


Changed = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _changes(event: Event, present: set[str]) -> Changed:
    """(writes, edits, deletes) of an event, keeping ``present`` (files known to exist) current."""
    writes: list[str] = []
    edits: list[str] = []
    deletes: list[str] = []
    for key, change in event.changes.items():
        if is_tree(key):
            if change.kind is ChangeKind.DELETED:
                inside = tree_dir(key)
                present.difference_update(
                    [p for p in present if inside == "" or p.startswith(inside + "/")]
                )
            continue
        if change.observed:
            present.add(key)
            continue
        existed = key in present
        if change.kind is ChangeKind.DELETED:
            present.discard(key)
            deletes.append(key)
        elif change.kind is ChangeKind.WRITTEN and not existed:
            present.add(key)
            writes.append(key)
        else:  # an overwrite, or a change the replay could not follow: the file was touched
            present.add(key)
            edits.append(key)
    return tuple(writes), tuple(edits), tuple(deletes)


def _shell_action(
    command: ShellCommand,
    event: Event,
    tool: str,
    paths: Paths,
    changed: Changed,
) -> Action:
    writes, edits, deletes = changed
    pipelines = shell_pipelines(command.command)
    failed = command.exit_code is not None and command.exit_code != 0
    reads = () if failed else _shell_reads(pipelines, command.cwd_abs, paths)
    check = None
    if command.check is not None:
        check = CheckFact(
            kind=command.check.kind,
            runner=command.check.runner,
            masked=command.check.masked,
            focused=is_focused(command.check.segment),
        )
    return Action(
        kind=ActionKind.SHELL,
        step=command.step_index,
        event=event.index,
        tool=tool,
        reads=reads,
        writes=writes,
        edits=edits,
        deletes=deletes,
        ok=None if command.exit_code is None else command.exit_code == 0,
        command=command.command,
        pipelines=pipelines,
        cwd=command.cwd_abs,
        exit_code=command.exit_code,
        check=check,
    )


# -- shell lines ---------------------------------------------------------------------------------


def shell_pipelines(script: str, depth: int = 0) -> tuple[Pipeline, ...]:
    """The simple commands of ``script`` as argv tuples, grouped by pipeline, in order.

    Input redirections are appended to the argv as ``"<", target`` so that what a command reads
    stays visible. ``sh -c SCRIPT``, ``eval`` and command substitutions are expanded (three
    levels deep); a substitution given to a shell (``bash <(curl …)``) becomes a pipeline
    into that shell, since that is what it does.
    """
    try:
        items = parse(script)
    except Exception:  # noqa: BLE001 - the reader is tolerant; whatever it still rejects
        return ((tuple(script.split()),),) if script.strip() else ()
    pipelines: list[Pipeline] = []
    current: list[Argv] = []
    extra: list[Pipeline] = []
    for item in items:
        if isinstance(item, str):
            if item in ("|", "|&"):
                continue
            if item in ("(", ")"):
                continue
            if current:
                pipelines.append(tuple(current))
                current = []
            pipelines.extend(extra)
            extra = []
            continue
        argv = _argv(item)
        if not argv:
            continue
        current.append(argv)
        if depth < 3:
            extra.extend(_expanded(item, argv, depth))
    if current:
        pipelines.append(tuple(current))
    pipelines.extend(extra)
    return tuple(pipelines)


def _argv(command: SimpleCommand) -> Argv:
    words = [w.value for w in command.argv]
    for redirect in command.redirects:
        if redirect.op in ("<", "<>") and redirect.target is not None:
            words += ["<", redirect.target.value]
    return tuple(words)


def _expanded(command: SimpleCommand, argv: Argv, depth: int) -> list[Pipeline]:
    real = unwrap(list(argv))
    program = basename(real[0]) if real else ""
    feeds_shell = program in SHELLS or program in ("source", ".", "eval")
    out: list[Pipeline] = []
    if program in SHELLS:
        script = _dash_c(real)
        if script is not None:
            out.extend(shell_pipelines(script, depth + 1))
    elif program == "eval":
        out.extend(shell_pipelines(" ".join(real[1:]), depth + 1))
    for word in command.argv:
        if not word.expands or not _SUBSTITUTION.search(word.raw):
            continue
        for inner in _substitutions(word.raw):
            for pipeline in shell_pipelines(inner, depth + 1):
                out.append((*pipeline, argv) if feeds_shell else pipeline)
    return out


def _dash_c(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv[1:], start=1):
        if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg) and i + 1 < len(argv):
            return argv[i + 1]
        if not arg.startswith("-"):
            return None
    return None


def _substitutions(raw: str) -> list[str]:
    """The scripts inside ``$(…)``, ``<(…)``, ``>(…)`` and backticks of a raw word."""
    found: list[str] = []
    i = 0
    while i < len(raw):
        if raw.startswith(("$(", "<(", ">("), i) and not raw.startswith("$((", i):
            start = i + 2
            level = 1
            j = start
            while j < len(raw) and level:
                level += {"(": 1, ")": -1}.get(raw[j], 0)
                j += 1
            found.append(raw[start : j - 1] if level == 0 else raw[start:])
            i = j
        elif raw[i] == "`":
            end = raw.find("`", i + 1)
            end = len(raw) if end < 0 else end
            found.append(raw[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return found


def _shell_reads(pipelines: Iterable[Pipeline], cwd: str | None, paths: Paths) -> tuple[str, ...]:
    found: list[str] = []
    for argv, here in walk_cwd(pipelines, cwd, paths):
        for raw in read_targets(argv):
            key = paths.resolve(raw, here).key
            if key and key not in found:
                found.append(key)
    return tuple(found)


def walk_cwd(
    pipelines: Iterable[Pipeline], cwd: str | None, paths: Paths
) -> Iterator[tuple[Argv, str | None]]:
    """Each simple command with the directory it runs in, following ``cd`` along the line."""
    for pipeline in pipelines:
        for argv in pipeline:
            real = unwrap(list(argv))
            if real and real[0] == "cd":
                target = next((a for a in real[1:] if not a.startswith("-")), "~")
                cwd = paths.absolute(target, cwd) if "$" not in target else None
                continue
            yield argv, cwd


def read_targets(argv: Sequence[str], *, searches: bool = False) -> list[str]:
    """The files a simple command prints: a reader's file operands and any input redirection.

    Recursive searches (``grep -r``, ``rg``) are not reads of their operands unless
    ``searches``: what they print from a folder says little about any one file, but a search
    through a credential file still exposes it.
    """
    targets: list[str] = []
    words = list(argv)
    if "<" in words:
        at = words.index("<")
        targets += [w for w in words[at + 1 :: 2]]
        words = words[:at]
    real = unwrap(words)
    if not real or basename(real[0]) not in READERS:
        return targets
    program = basename(real[0])
    # Bare numbers are option values (head -n 5, grep -A 50), not files.
    operands = [w for w in real[1:] if not w.startswith("-") and not w.isdigit()]
    if program == "sed" and any(w.startswith("-i") for w in real[1:]):
        return targets  # sed -i edits; the replay records that as a change
    if program in _SCRIPTED:
        operands = operands[1:]
    searching = program in ("rg", "ag") or (program.endswith("grep") and _recursive(real[1:]))
    if searching and not searches:
        return targets
    return targets + operands


def _recursive(args: Sequence[str]) -> bool:
    return any(
        a in ("--recursive", "--dereference-recursive")
        or (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a))
        for a in args
    )


# Options that select tests by name or package (pytest -k/-m, go -run, jest -t, vitest --run
# FILE, mocha --grep, cargo --package/--test, dotnet --filter).
_FILTER_OPTIONS = frozenset(
    {"-k", "-m", "-run", "--run", "-t", "--testNamePattern", "--grep", "-g", "--test"}
    | {"--package", "--filter", "--match", "--spec"}
)
_WHOLE_SUITE = frozenset({"", ".", "...", "tests", "test", "spec", "specs", "src", "__tests__"})


def is_focused(segment: str) -> bool:
    """Whether a check names what it runs rather than running everything.

    A test id (``tests/test_x.py::test_y``), a file or folder below the top level
    (``tests/test_x.py``, ``./pkg/redact/...``) or a filter option (``-k``, ``-run``,
    ``--testNamePattern`` …) makes a check focused; ``pytest``, ``go test ./...``, ``npm test``
    and ``pytest tests/`` do not.
    """
    pipelines = shell_pipelines(segment)
    if not pipelines or not pipelines[0]:
        return False
    argv = unwrap(list(pipelines[0][0]))
    module = python_module(argv)
    args = module[1] if module is not None else argv[1:]
    for i, arg in enumerate(args):
        name = arg.split("=", 1)[0]
        if name in _FILTER_OPTIONS and ("=" in arg or i + 1 < len(args)):
            return True
        if arg.startswith("-"):
            continue
        if "::" in arg:
            return True
        cleaned = arg.removeprefix("./").rstrip("/")
        if cleaned.endswith("/..."):  # a Go package pattern: focused unless it is ./...
            cleaned = cleaned[: -len("/...")]
            if cleaned not in _WHOLE_SUITE:
                return True
        if cleaned in _WHOLE_SUITE:
            continue
        if "/" in cleaned or posixpath.splitext(cleaned)[1] in _SOURCE_SUFFIXES:
            return True
    return False


_SOURCE_SUFFIXES = frozenset(
    {".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".rb", ".java", ".kt"}
)


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
            CheckFact(CheckKind(check[0]), check[1], bool(check[2]), bool(check[3]))
            if check
            else None
        ),
    )


def _final_value(entry: FinalFile) -> Any:
    return entry.sha if entry.status is Status.KNOWN else str(entry.status)


def _final_from(value: Any) -> FinalFile:
    if value in (Status.LOST, Status.PARTIAL):
        return FinalFile(Status(value))
    return FinalFile(Status.KNOWN, value)
