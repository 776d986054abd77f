"""Replaying an ATIF trajectory into per-call file changes, commands and checks.

One pass over the tool calls in step order (``calls``). Each call becomes an event; its file
changes come from the tool's own arguments and results (``file_tools``: Write/Edit/MultiEdit,
pi write/edit, Codex apply_patch, full reads) and, for shell calls, from ``effects.run_script``
plus what a shell command that only read one file showed (``commands``, ``reads``: ``cat f``,
``sed -n '1,200p' f`` …). All of them change the running ``state.FileState``; patches from any
source go through ``patching``. Reads are recorded as observations (``Change.observed``): they
establish content or partial knowledge, and never lose anything. Side data improves this where
present (Claude Code's ``originalFile`` turns an edit on an unknown base into known content;
``file.content`` and line counts make reads exact; per-call ``cwd``) but nothing depends on it:
plain ATIF replays too.

Outcomes matter: a tool that failed changed nothing; a call with no recorded result might have
done its work, so what it would have written is lost; a shell command that failed may have
stopped anywhere, so its certain writes become lost too.

A call that spawned a subagent whose recording is given (``subagents``, see ``subagents.py``)
plays that recording first, through the same files: one event per subagent call, marked with
its session id, then the spawning call's own event, which changes nothing more. The subagent's
shell commands change files but stay out of ``commands``: they are its own trajectory's, mined
there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..blobs import BlobStore
from .calls import ToolCall, as_mapping, as_str, collect_calls, guess_root, link_sessions
from .commands import Shell
from .file_tools import play_file_tool
from .model import Event, ReplayResult
from .patching import side_patch
from .paths import Paths
from .state import FileState
from .subagents import Subagent, in_background
from .tools import NoOp, PollOp, ShellOp, classify


def replay(
    atif: Mapping[str, Any],
    side_data: Mapping[str, Any] | None = None,
    *,
    root: str | None,
    blobs: BlobStore,
    subagents: Mapping[str, Subagent] | None = None,
    seed: Mapping[str, str] | None = None,
) -> ReplayResult:
    """Replay ``atif`` once; ``root`` is the session's project directory when known.

    ``subagents`` maps a spawning call's ``tool_call_id`` to the subagent's recording.
    ``seed`` is the project's files known before the first call (``{path: sha}``, contents
    already in ``blobs``: a clone's tree at the session's start); the log's writes land on
    it, and what the log showed of a file before touching it wins over it (``state.py``).
    """
    side = side_data or {}
    agent_info = as_mapping(atif.get("agent"))
    agent = as_str(agent_info.get("name"))
    steps = [s for s in (atif.get("steps") or []) if isinstance(s, Mapping)]
    side_cwd = as_mapping(side.get("cwd"))
    calls = _calls(steps, side, agent)
    resolved_root = root or guess_root(agent_info, side_cwd, calls)
    state = FileState(Paths(resolved_root), blobs, seed)
    engine = _Engine(state, agent, side, _Shared(dict(subagents or {})))
    for call in calls:
        engine.play(call)
    return ReplayResult(
        root=engine.state.paths.root,
        agent=agent,
        step_ids=tuple(s.get("step_id", i + 1) for i, s in enumerate(steps)),
        events=tuple(engine.shared.events),
        commands=tuple(engine.shell.commands),
        final_state=dict(engine.state.files),
        start=dict(state.start),
        seed_disagreements=tuple(state.disagreements),
    )


def _calls(
    steps: list[Mapping[str, Any]], side: Mapping[str, Any], agent: str | None
) -> list[ToolCall]:
    calls = collect_calls(steps, as_mapping(side.get("tool_results")))
    for call in calls:
        call.op = classify(call.name, call.args, agent)
    link_sessions(calls)
    return calls


class _Shared:
    """What the parent's engine and its subagents' engines share: events, recordings unplayed."""

    def __init__(self, subagents: dict[str, Subagent]) -> None:
        self.events: list[Event] = []
        self.subagents = subagents  # each recording plays once, so a cycle cannot loop


class _Engine:
    def __init__(
        self,
        state: FileState,
        agent: str | None,
        side: Mapping[str, Any],
        shared: _Shared,
        *,
        subagent: str | None = None,
        at: ToolCall | None = None,
    ) -> None:
        self.state = state
        self.shared = shared
        self.subagent = subagent  # the session id of the subagent this engine plays, if one
        self.at = at  # the parent's spawning call: where the subagent's events belong
        self.side_cwd: Mapping[str, Any] = as_mapping(side.get("cwd"))
        # Codex side data from ingest: the patches Codex reports it applied, and the calls
        # nested in a code-mode exec.
        self.side_commands: Mapping[str, Any] = as_mapping(side.get("commands"))
        self.side_patches: Mapping[str, Any] = as_mapping(side.get("patches"))
        self.nested: Mapping[str, Any] = as_mapping(side.get("nested_calls"))
        self.shell = Shell(self.state, agent=agent, side_commands=self.side_commands)

    @property
    def events(self) -> list[Event]:
        return self.shared.events

    def play(self, call: ToolCall) -> None:
        recording = self.shared.subagents.pop(call.tool_call_id, None)
        if recording is not None and in_background(call):
            recording = None  # its edits happened at times the logs do not relate
        if recording is not None:
            self.play_subagent(call, recording)
        op = NoOp() if recording is not None else call.op
        self.state.start_call()
        command_index: int | None = None
        nested = self.nested.get(call.tool_call_id)
        if isinstance(nested, list) and nested:
            command_index = self.play_nested(call, nested)
        elif isinstance(op, ShellOp):
            command_index = self.shell.run(
                call, op, self.call_cwd(call, op.workdir), event_index=len(self.events)
            )
        elif not isinstance(op, NoOp | PollOp):  # a poll's output belongs to its command
            play_file_tool(
                self.state, call, op, self.call_cwd(call), side_patches=self.side_patches
            )
        where = self.at or call
        self.events.append(
            Event(
                index=len(self.events),
                step_index=where.step_index,
                step_id=where.step_id,
                tool_call_id=call.tool_call_id,
                tool=call.name,
                changes=self.state.changes,
                command_index=command_index if self.subagent is None else None,
                subagent=self.subagent,
            )
        )

    def play_subagent(self, call: ToolCall, recording: Subagent) -> None:
        """The subagent's calls, in its order, as events of the step where ``call`` returned."""
        atif, side = recording.atif, recording.side_data
        agent = as_str(as_mapping(atif.get("agent")).get("name"))
        steps = [s for s in (atif.get("steps") or []) if isinstance(s, Mapping)]
        child = _Engine(
            self.state,
            agent,
            side,
            self.shared,
            subagent=recording.session_id,
            at=self.at or call,
        )
        for inner in _calls(steps, side, agent):
            child.play(inner)

    def play_nested(self, call: ToolCall, nested: list[Any]) -> int | None:
        """A Codex code-mode exec: replay the commands and patches it ran, in order."""
        first: int | None = None
        for nested_id in nested:
            info = self.side_commands.get(nested_id)
            if isinstance(info, Mapping) and isinstance(info.get("command"), str):
                inner = ToolCall(call.step_index, call.step_id, str(nested_id), "exec_command", {})
                op = ShellOp(info["command"], as_str(info.get("cwd")))
                index = self.shell.run(
                    inner, op, self.call_cwd(inner, op.workdir), event_index=len(self.events)
                )
                first = index if first is None else first
            elif nested_id in self.side_patches:
                side_patch(self.state, self.side_patches[nested_id])
        return first

    def call_cwd(self, call: ToolCall, workdir: str | None = None) -> str | None:
        recorded = self.side_cwd.get(call.tool_call_id)
        if isinstance(recorded, str) and recorded.startswith("/"):
            return recorded
        paths = self.state.paths
        if workdir:
            return paths.absolute(workdir, paths.root)
        return self.shell.cwd if self.shell.persistent else paths.root
