"""A generated Claude Code hook at run time: one tool call in, allow or block out.

>>> from training.core.spec import ForbiddenRule
>>> config = HookConfig(behaviour="no-force-push", version=1, title="Never force-push",
...                     rules=(ForbiddenRule("force_push"),), words={"force_push": "force-push"})
>>> event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/repo",
...          "tool_input": {"command": "git push -f origin main"}}
>>> decide(config, event, SessionState(), root="/repo")
Decision(block=True, reason='git push -f origin main: never force-push')

This module runs inside the hook script (``claude.py`` embeds it with ``bundle``), so it uses
the standard library and the project's own modules only, and decides by the host's rules:

1. The call becomes an ``Action`` the way ``facts.build_facts`` makes one from a recorded
   call: the replay's ``classify`` reads the tool, ``Paths`` makes the keys, a shell command
   gets ``shell_pipelines`` and ``_shell_reads``. What a call would change comes from the real
   files where a trajectory has the replay's: a Write over a file that exists is an edit, and a
   shell command's changes are those the replay's effect walker (``effects.run_script``) finds,
   recursive deletions expanded to the files on disk.
2. Each forbidden rule runs its own detector from ``forbidden.CATALOGUE`` on that one action.
   ``edit_unread_file`` also sees, before it, one read of every file this session has already
   read, written or edited.
3. A fixed order (read X before editing X) refuses the second action, by ``harness.
   action_matches``, until the first has happened in this session.

Session state (``SessionState``): ``edit_unread_file`` and the order need to know what earlier
calls did. The same script runs on ``PostToolUse`` (and ``PostToolUseFailure``) to record it
in ``<state dir>/<session_id>.json``, under an exclusive ``flock`` since Claude Code may run
calls in parallel. Only calls that happened are recorded: a refused call never reaches
``PostToolUse``, and a failed one counts as the replay counts it (a failed read shows nothing; a
failed shell command's targets may have changed). A lost or corrupt state file reads as an
empty session, which refuses more, never less.

Claude Code's contract (https://code.claude.com/docs/en/hooks, "PreToolUse" and "Exit code
output"): the hook gets JSON on stdin with ``session_id``, ``cwd``, ``hook_event_name``,
``tool_name`` and ``tool_input``; exit code 2 blocks the call and shows stderr to Claude as the
reason; exit 0 lets it through; any other exit code is a non-blocking error, so a hook that
crashes would let the call run. Hence ``main`` turns every unexpected error on ``PreToolUse``
into exit 2 with the error as the reason: a broken button refuses, it does not wave through.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import posixpath
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from training.core.facts.build import _kind, _op_paths
from training.core.facts.model import Action
from training.core.facts.shell import shell_pipelines
from training.core.facts.shell import shell_reads as _shell_reads
from training.core.harness import action_matches
from training.core.spec import ActionKind
from trajectories.core.replay import effects as fx
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.tools import DeleteOp, ShellOp, WriteOp, classify

from .rules import HookConfig, failure_said, forbidden_reasons

AGENT = "claude-code"
# A file larger than this is not read to feed a command's input: only names matter here.
MAX_TEXT_BYTES = 1 << 20
# Files below a removed folder; beyond this the rest are not listed one by one.
MAX_LISTED = 20_000
PRE = "PreToolUse"
POST = ("PostToolUse", "PostToolUseFailure")


@dataclass(slots=True)
class SessionState:
    known: set[str] = field(default_factory=set)  # read, written or edited in this session
    first_done: bool = False  # the order's first action has happened

    @classmethod
    def from_json(cls, text: str) -> SessionState:
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = data.get("known")
        return cls(
            known={k for k in known if isinstance(k, str)} if isinstance(known, list) else set(),
            first_done=data.get("first_done") is True,
        )

    def to_json(self) -> str:
        return json.dumps({"known": sorted(self.known), "first_done": self.first_done})


@dataclass(frozen=True, slots=True)
class Decision:
    block: bool
    reason: str = ""


def decide(
    config: HookConfig, event: Mapping[str, Any], state: SessionState, *, root: str
) -> Decision:
    """Whether a ``PreToolUse`` call may run, by the config's rules and the session so far."""
    action = action_of(event, root=root)
    if action is None:
        return Decision(False)
    reasons = forbidden_reasons(config, action, root=root, known=state.known)
    if config.order is not None and not state.first_done:
        first, then = config.order
        if action_matches(then, action)[0]:
            reasons.append(
                f"{config.order_words[1] or then.label} comes only after you "
                f"{config.order_words[0] or first.label}: do that first"
            )
    if not reasons:
        return Decision(False)
    return Decision(True, "; ".join(reasons))


def record(config: HookConfig, event: Mapping[str, Any], state: SessionState, *, root: str) -> None:
    """What a call that ran (``PostToolUse``) or failed (``PostToolUseFailure``) adds."""
    action = action_of(event, root=root)
    if action is None:
        return
    if event.get("hook_event_name") == "PostToolUseFailure":
        action = _failed(action)
    state.known.update(action.reads, action.writes, action.edits)
    if config.order is not None and action_matches(config.order[0], action)[0]:
        state.first_done = True


def _failed(action: Action) -> Action:
    # As the replay sees a failed call: a read showed nothing; a tool changed nothing; a shell
    # command's targets may have changed in part, so they are edits of unknown content.
    if action.kind is not ActionKind.SHELL:
        return Action(action.kind, action.step, action.event, action.tool, paths=action.paths)
    changed = tuple(dict.fromkeys((*action.writes, *action.edits, *action.deletes)))
    return Action(
        action.kind,
        action.step,
        action.event,
        action.tool,
        edits=changed,
        ok=False,
        command=action.command,
        pipelines=action.pipelines,
        cwd=action.cwd,
    )


def action_of(event: Mapping[str, Any], *, root: str) -> Action | None:
    """The call as the facts of a trajectory would show it, had it run as asked."""
    name = event.get("tool_name")
    arguments = event.get("tool_input")
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        return None
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else root
    paths = Paths(root)
    op = classify(name, arguments, AGENT)
    kind = _kind(op)
    if isinstance(op, ShellOp):
        where = op.workdir if op.workdir and op.workdir.startswith("/") else cwd
        pipelines = shell_pipelines(op.script)
        disk = _Disk(paths)
        fx.run_script(op.script, where, disk)
        return Action(
            ActionKind.SHELL,
            0,
            1,
            name,
            reads=_shell_reads(pipelines, where, paths),
            writes=disk.keys(disk.writes),
            edits=disk.keys(disk.edits),
            deletes=disk.keys(disk.deletes),
            command=op.script,
            pipelines=pipelines,
            cwd=where,
        )
    named = tuple(paths.resolve(p, cwd).key for p in _op_paths(op))
    writes: list[str] = []
    edits: list[str] = []
    if isinstance(op, WriteOp):
        for key in named:
            (edits if _exists(paths, key) else writes).append(key)
    elif kind is ActionKind.EDIT:
        edits.extend(named)
    return Action(
        kind,
        0,
        1,
        name,
        paths=named,
        reads=named if kind is ActionKind.READ else (),
        writes=tuple(writes),
        edits=tuple(edits),
        deletes=named if isinstance(op, DeleteOp) else (),
    )


def _exists(paths: Paths, key: str) -> bool:
    absolute = key if key.startswith("/") else posixpath.join(paths.root, key)
    return os.path.lexists(absolute)


class _Disk:
    """``effects.Files`` over the real files: what a command line would change, before it runs.

    The replay's walker decides what each program does to which paths; this sink only says
    whether those paths exist, so that a change to an existing file is an edit and a removed
    folder's files are each removed.
    """

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.writes: list[str] = []
        self.edits: list[str] = []
        self.deletes: list[str] = []

    def keys(self, absolute: list[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.paths.of_abs(a).key for a in absolute))

    def text(self, path: str) -> str | None:
        try:
            if os.path.getsize(path) > MAX_TEXT_BYTES:
                return None
            with open(path, encoding="utf-8") as handle:
                return handle.read()
        except (OSError, ValueError):
            return None

    def is_dir(self, path: str) -> bool | None:
        if os.path.isdir(path):
            return True
        return False if os.path.lexists(path) else None

    def absolute(self, raw: str, cwd: str | None) -> str | None:
        return self.paths.absolute(raw, cwd)

    def apply(self, effect: fx.Effect) -> None:
        if isinstance(effect, fx.Write):
            # Content the replay could not know makes the change an edit, new file or not.
            self._change(effect.path, created_if_new=effect.content is not None)
        elif isinstance(effect, fx.Touch):
            if not os.path.lexists(effect.path):
                self.writes.append(effect.path)
        elif isinstance(effect, fx.Delete):
            if os.path.isdir(effect.path) and not os.path.islink(effect.path):
                if effect.recursive:
                    self.deletes.append(effect.path)
                    self.deletes.extend(_files_below(effect.path))
                return  # rm without -r refuses a folder
            self.deletes.append(effect.path)
        elif isinstance(effect, fx.GlobEffect):
            for match in sorted(glob.glob(effect.pattern)):
                below = list(_files_below(match)) if os.path.isdir(match) else [match]
                if os.path.isdir(match) and not effect.recursive:
                    continue
                for path in below:
                    if effect.delete:
                        self.deletes.append(path)
                    else:
                        self.edits.append(path)
        elif isinstance(effect, fx.Move | fx.Copy):
            self._transfer(effect)
        elif isinstance(effect, fx.CodexPatch):
            base = effect.base or self.paths.root
            for verb, path in _patch_files(effect.text):
                target = posixpath.normpath(posixpath.join(base, path))
                if verb == "Delete":
                    self.deletes.append(target)
                else:
                    self._change(target, created_if_new=verb == "Add")
        elif isinstance(effect, fx.UnifiedPatch) and effect.text is not None:
            for old, new in _diff_files(effect.text, effect.strip):
                base = effect.base or self.paths.root
                if new is None and old is not None:
                    self.deletes.append(posixpath.normpath(posixpath.join(base, old)))
                elif new is not None:
                    self._change(posixpath.normpath(posixpath.join(base, new)), old is None)
        # LostTree and MakeDir change no named file: a folder that may have changed is
        # uncertainty, which the detectors do not count as an edit either.

    def _change(self, path: str, created_if_new: bool) -> None:
        if os.path.lexists(path) or not created_if_new:
            self.edits.append(path)
        else:
            self.writes.append(path)

    def _transfer(self, effect: fx.Move | fx.Copy) -> None:
        source = effect.src
        target = effect.dst
        if effect.into_dir or os.path.isdir(target):
            target = posixpath.join(target, posixpath.basename(source.rstrip("/")))
        if os.path.isdir(source):
            pairs = [
                (path, posixpath.join(target, posixpath.relpath(path, source)))
                for path in _files_below(source)
            ]
        else:
            pairs = [(source, target)]
        for old, new in pairs:
            if isinstance(effect, fx.Move):
                self.deletes.append(old)
            self._change(new, created_if_new=True)


def _files_below(folder: str) -> Iterator[str]:
    count = 0
    for directory, _, files in os.walk(folder):
        for name in sorted(files):
            yield posixpath.join(directory, name)
            count += 1
            if count >= MAX_LISTED:
                return


_PATCH_LINE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$", re.M)


def _patch_files(text: str) -> list[tuple[str, str]]:
    """(Add, Update or Delete, path) per file of a Codex patch; a move is a delete and an add."""
    out: list[tuple[str, str]] = []
    for verb, path in _PATCH_LINE.findall(text):
        if verb == "Move to" and out and out[-1][0] == "Update":
            out[-1] = ("Delete", out[-1][1])
            out.append(("Add", path.strip()))
        elif verb != "Move to":
            out.append((verb.split()[0], path.strip()))
    return out


# The replay's patch reader needs unidiff, which a hook cannot carry; only the file names of a
# unified diff matter here, and they sit on its ---/+++ lines.
def _diff_files(text: str, strip: int) -> list[tuple[str | None, str | None]]:
    pairs: list[tuple[str | None, str | None]] = []
    old: str | None = None
    for line in text.splitlines():
        if line.startswith("--- "):
            old = _diff_path(line[4:], strip)
        elif line.startswith("+++ "):
            pairs.append((old, _diff_path(line[4:], strip)))
            old = None
    return pairs


def _diff_path(raw: str, strip: int) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    parts = path.split("/")
    return "/".join(parts[strip:]) if len(parts) > strip else parts[-1]


# -- the script's entry point --------------------------------------------------------------------


def main(
    config: Mapping[str, Any],
    argv: Sequence[str],
    *,
    stdin: IO[str] | None = None,
    stderr: IO[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run one hook call: exit 2 refuses it (the reason on stderr), exit 0 lets it through."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    environ = os.environ if environ is None else environ
    hook = HookConfig.from_dict(config)
    event_name = PRE
    try:
        state_dir = _state_dir(argv)
        event = json.load(stdin)
        if not isinstance(event, dict):
            raise ValueError("the hook input is not a JSON object")
        event_name = str(event.get("hook_event_name") or PRE)
        cwd = event.get("cwd")
        root = environ.get("CLAUDE_PROJECT_DIR") or (cwd if isinstance(cwd, str) else os.getcwd())
        if hook.stateful and state_dir is None:
            raise ValueError("this hook keeps session state and needs --state DIR")
        if event_name == PRE:
            with _session(state_dir, event, write=False, enabled=hook.stateful) as state:
                decision = decide(hook, event, state, root=root)
            if decision.block:
                print(
                    f"Refused by the traj2env hook for “{hook.title}”: {decision.reason}.",
                    file=stderr,
                )
                return 2
            return 0
        if event_name in POST and hook.stateful:
            with _session(state_dir, event, write=True, enabled=True) as state:
                record(hook, event, state, root=root)
        return 0
    except Exception as error:  # noqa: BLE001 - a crashing hook must not let the call through
        if event_name != PRE:
            print(f"traj2env hook for {hook.behaviour}: {failure_said(error)}", file=stderr)
            return 1
        print(
            f"The traj2env hook for “{hook.title}” failed ({failure_said(error)}) and refuses "
            "the call to be safe; fix or remove the hook.",
            file=stderr,
        )
        return 2


def _state_dir(argv: Sequence[str]) -> str | None:
    args = list(argv)
    if not args:
        return None
    if len(args) == 2 and args[0] == "--state" and args[1]:
        return args[1]
    raise ValueError(f"usage: --state DIR (got {' '.join(args)})")


@contextlib.contextmanager
def _session(
    state_dir: str | None, event: Mapping[str, Any], *, write: bool, enabled: bool
) -> Iterator[SessionState]:
    if not enabled or state_dir is None:
        yield SessionState()
        return
    session = str(event.get("session_id") or "no-session")
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,100}", session) or session.startswith("."):
        session = hashlib.sha256(session.encode()).hexdigest()
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, f"{session}.json")
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
        handle.seek(0)
        state = SessionState.from_json(handle.read())
        yield state
        if write:
            handle.seek(0)
            handle.truncate()
            handle.write(state.to_json())
            handle.flush()
