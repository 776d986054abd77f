"""Replaying an ATIF trajectory into per-call file changes, commands and checks.

One pass over the tool calls in step order. Each call becomes an event; its file changes come
from the tool's own arguments and results (Write/Edit/MultiEdit, pi write/edit, Codex
apply_patch, full reads) and, for shell calls, from ``effects.run_script`` plus what a shell
command that only read one file showed (``reads``: ``cat f``, ``sed -n '1,200p' f`` …). Reads
are recorded as observations (``Change.observed``): they establish content or partial
knowledge, and never lose anything. Side data improves this where present (Claude Code's
``originalFile`` turns an edit on an unknown base into known content; ``file.content`` and
line counts make reads exact; per-call ``cwd``) but nothing depends on it: plain ATIF
replays too.

Outcomes matter: a tool that failed changed nothing; a call with no recorded result might have
done its work, so what it would have written is lost; a shell command that failed may have
stopped anywhere, so its certain writes become lost too.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..blobs import BlobStore
from . import effects as fx
from .checks import CheckSpec
from .index import apply_value, change_value
from .model import (
    Change,
    ChangeKind,
    Check,
    CheckKind,
    Entry,
    Event,
    ReplayResult,
    ShellCommand,
    Status,
    is_tree,
    tree_dir,
    tree_key,
    under,
)
from .patches import (
    PatchError,
    apply_codex_chunks,
    apply_hunks,
    hunks_from_diff_body,
    hunks_from_structured_patch,
    parse_codex_patch,
    parse_unified,
)
from .paths import Paths, Resolved
from .reads import VERBATIM_AGENTS, doubtful, interpret, parse_read
from .results import (
    Outcome,
    Result,
    codex_session,
    content_text,
    has_media,
    metadata_trailer,
    shell_output,
    shell_status,
    tool_status,
)
from .tools import (
    ChangeListOp,
    CodexPatchOp,
    DeleteOp,
    EditOp,
    InsertOp,
    LostOp,
    NoOp,
    Op,
    PollOp,
    ReadOp,
    ShellOp,
    WriteOp,
    classify,
)

# Claude Code's Read: a right-aligned line number, then "→" (or a tab in older versions).
_NUMBERED = re.compile(r"^ *(\d+)(?:\u2192|\t)(.*)$", re.DOTALL)
_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>\s*$", re.DOTALL)
_EMPTY_FILE = re.compile(r"the file exists but (?:the contents are|is) empty", re.IGNORECASE)
_EDITOR_HEADER = re.compile(r"^Here's the result of running `cat -n` on [^\n]*:\n")
_PLAIN_TRUNCATED = re.compile(
    r"(\[\d+ more lines in file\. Use offset=\d+ to continue\]|\.\.\. \(\d+ more lines not "
    r"shown|\[Showing lines \d+-\d+ of \d+|\[Output truncated|\[truncated)\S*[^\n]*\s*$"
)
# Claude Code's Read stops at 2000 lines and cuts lines at 2000 characters without saying so.
_READ_LINE_CAP = 2000
_CHECK_PRIORITY = (CheckKind.TEST, CheckKind.BUILD, CheckKind.TYPECHECK, CheckKind.LINT)
# Agents whose shell keeps its working directory from one call to the next.
_PERSISTENT_SHELL = {"claude-code", "claude_code", "claude", "terminus", "terminus-2"}
# Agents that flag every failed call, so a result without the flag succeeded.
_FLAGS_FAILURES = {"claude-code", "claude_code", "claude"}
# Text cut short before it reached the trajectory ("...[trimmed]" in some Harbor exports).
_TRIMMED = re.compile(r"(\[trimmed\]|\[truncated\]|\.\.\. ?\(truncated\))\s*$")


@dataclass
class _Call:
    step_index: int
    step_id: Any
    tool_call_id: str
    name: str
    args: Mapping[str, Any]
    result: Result | None = None
    op: Op = field(default_factory=NoOp)
    # Codex: texts of the write_stdin polls that carried this command's later output, and
    # those polls' arguments (their max_output_tokens bound what each text could show).
    polls: list[str] = field(default_factory=list)
    poll_args: list[Mapping[str, Any]] = field(default_factory=list)


def replay(
    atif: Mapping[str, Any],
    side_data: Mapping[str, Any] | None = None,
    *,
    root: str | None,
    blobs: BlobStore,
) -> ReplayResult:
    """Replay ``atif`` once; ``root`` is the session's project directory when known."""
    side = side_data or {}
    agent_info = _mapping(atif.get("agent"))
    agent = _str(agent_info.get("name"))
    steps = [s for s in (atif.get("steps") or []) if isinstance(s, Mapping)]
    side_cwd = _mapping(side.get("cwd"))
    calls = collect_calls(steps, _mapping(side.get("tool_results")))
    for call in calls:
        call.op = classify(call.name, call.args, agent)
    _link_sessions(calls)
    resolved_root = root or _guess_root(agent_info, side_cwd, calls)
    engine = _Engine(Paths(resolved_root), blobs, agent, side)
    for call in calls:
        engine.play(call)
    return ReplayResult(
        root=engine.paths.root,
        agent=agent,
        step_ids=tuple(s.get("step_id", i + 1) for i, s in enumerate(steps)),
        events=tuple(engine.events),
        commands=tuple(engine.commands),
        final_state=dict(engine.files),
    )


def _guess_root(
    agent_info: Mapping[str, Any],
    side_cwd: Mapping[str, Any],
    calls: Sequence[_Call],
) -> str:
    extra = _mapping(agent_info.get("extra"))
    cwds = extra.get("cwds")
    for cwd in (extra.get("cwd"), *(cwds if isinstance(cwds, list) else ())):
        if isinstance(cwd, str) and cwd.startswith("/"):
            return cwd
    for value in side_cwd.values():
        if isinstance(value, str) and value.startswith("/"):
            return value
    for call in calls:
        workdir = call.args.get("workdir")
        if isinstance(workdir, str) and workdir.startswith("/"):
            return workdir
    # No recorded directory: the deepest directory holding every absolute path a file tool
    # touched (`/repo` for Reads of /repo/a/x.go and /repo/b/y.yaml).
    touched = [
        op.path
        for op in (c.op for c in calls)
        if isinstance(op, ReadOp | WriteOp | EditOp) and op.path.startswith("/")
    ]
    if touched:
        common = posixpath.commonpath([posixpath.dirname(p) for p in touched])
        if common != "/":
            return common
    return "/"  # nothing says where the project is: paths stay absolute, minus the slash


def _link_sessions(calls: Sequence[_Call]) -> None:
    """Attach each Codex write_stdin poll to the exec_command whose session it reads.

    Done before replaying so that a command's exit status, which may only arrive in its last
    poll, is known when its file effects are applied.
    """
    open_sessions: dict[int, _Call] = {}
    for call in calls:
        if call.result is None:
            continue
        if isinstance(call.op, ShellOp):
            session = codex_session(call.result.text)
            if session is not None:
                open_sessions[session] = call
        elif isinstance(call.op, PollOp):
            owner = open_sessions.get(call.op.session)
            if owner is None:
                continue
            owner.polls.append(call.result.text)
            owner.poll_args.append(call.args)
            if codex_session(call.result.text) is None and "Process exited" in call.result.text:
                del open_sessions[call.op.session]


def collect_calls(
    steps: Sequence[Mapping[str, Any]], side_results: Mapping[str, Any]
) -> list[_Call]:
    calls: list[_Call] = []
    by_id: dict[str, _Call] = {}
    for index, step in enumerate(steps):
        step_calls: list[_Call] = []
        for order, raw in enumerate(step.get("tool_calls") or []):
            if not isinstance(raw, Mapping):
                continue
            call_id = raw.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id or call_id in by_id:
                call_id = f"step{index}-call{order}"
            args = raw.get("arguments")
            call = _Call(
                step_index=index,
                step_id=step.get("step_id", index + 1),
                tool_call_id=call_id,
                name=str(raw.get("function_name") or ""),
                args=args if isinstance(args, Mapping) else {},
            )
            calls.append(call)
            step_calls.append(call)
            by_id[call_id] = call
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, Mapping) else None
        step_extra = step.get("extra") if isinstance(step.get("extra"), Mapping) else {}
        for raw_result in results or []:
            if not isinstance(raw_result, Mapping):
                continue
            target = by_id.get(str(raw_result.get("source_call_id") or ""))
            extra = dict(_mapping(raw_result.get("extra")))
            if target is None and raw_result.get("source_call_id") is None:
                # Results without a call id: in order on the calling step, or (OpenClaw-style
                # ATIF, one result per step) via the step's own pointer to its call.
                waiting = [c for c in step_calls if c.result is None]
                if waiting:
                    target = waiting[0]
                elif not step_calls and isinstance(step_extra, Mapping):
                    target = by_id.get(str(step_extra.get("tool_call_id") or ""))
                    for key, value in step_extra.items():
                        extra.setdefault(key, value)
            if target is None or target.result is not None:
                continue
            content = raw_result.get("content")
            text = content_text(content)
            side = side_results.get(target.tool_call_id)
            target.result = Result(
                text=text,
                extra=extra,
                side=side if side is not None else metadata_trailer(text),
                media=has_media(content),
            )
    return calls


class _Engine:
    def __init__(
        self, paths: Paths, blobs: BlobStore, agent: str | None, side: Mapping[str, Any]
    ) -> None:
        self.paths = paths
        self.blobs = blobs
        self.agent = agent
        self.side_cwd: Mapping[str, Any] = _mapping(side.get("cwd"))
        # Codex side data from ingest: exit codes and outputs assembled from the rollout's own
        # end events, the patches Codex reports it applied, and calls nested in code-mode exec.
        self.side_commands: Mapping[str, Any] = _mapping(side.get("commands"))
        self.side_patches: Mapping[str, Any] = _mapping(side.get("patches"))
        self.nested: Mapping[str, Any] = _mapping(side.get("nested_calls"))
        self.persistent = (agent or "").lower() in _PERSISTENT_SHELL
        self.verbatim = (agent or "").lower() in VERBATIM_AGENTS
        self.flags_failures = (agent or "").lower() in _FLAGS_FAILURES
        self.files: dict[str, Entry] = {}
        self.texts: dict[str, str] = {}
        self.dirs: set[str] = set()
        self.absent: set[str] = set()
        self.shell_cwd: str | None = paths.root
        self.events: list[Event] = []
        self.commands: list[ShellCommand] = []
        self.changes: dict[str, Change] = {}

    # -- one call ------------------------------------------------------------------------------

    def play(self, call: _Call) -> None:
        op = call.op
        self.changes = {}
        command_index: int | None = None
        nested = self.nested.get(call.tool_call_id)
        if isinstance(nested, list) and nested:
            command_index = self.play_nested(call, nested)
        elif isinstance(op, ShellOp):
            command_index = self.shell(call, op)
        elif not isinstance(op, NoOp | PollOp):  # a poll's output belongs to its command
            self.file_tool(call, op)
        self.events.append(
            Event(
                index=len(self.events),
                step_index=call.step_index,
                step_id=call.step_id,
                tool_call_id=call.tool_call_id,
                tool=call.name,
                changes=self.changes,
                command_index=command_index,
            )
        )

    def play_nested(self, call: _Call, nested: list[Any]) -> int | None:
        """A Codex code-mode exec: replay the commands and patches it ran, in order."""
        first: int | None = None
        for nested_id in nested:
            info = self.side_commands.get(nested_id)
            if isinstance(info, Mapping) and isinstance(info.get("command"), str):
                inner = _Call(call.step_index, call.step_id, str(nested_id), "exec_command", {})
                index = self.shell(inner, ShellOp(info["command"], _str(info.get("cwd"))))
                first = index if first is None else first
            elif nested_id in self.side_patches:
                self.side_patch(self.side_patches[nested_id])
        return first

    def call_cwd(self, call: _Call, workdir: str | None = None) -> str | None:
        recorded = self.side_cwd.get(call.tool_call_id)
        if isinstance(recorded, str) and recorded.startswith("/"):
            return recorded
        if workdir:
            return self.paths.absolute(workdir, self.paths.root)
        return self.shell_cwd if self.persistent else self.paths.root

    # -- shell ---------------------------------------------------------------------------------

    def shell(self, call: _Call, op: ShellOp) -> int:
        cwd = self.call_cwd(call, op.workdir)
        result = call.result
        texts = [result.text, *call.polls] if result is not None else []
        if call.polls and result is not None:
            result = replace(result, text="\n".join(texts))
        status = shell_status(result, flags_failures=self.flags_failures)
        output = "".join(shell_output(t) for t in texts)
        # Every recording of the output with whether it shows signs of being cut, for reads.
        limits = [call.args, *call.poll_args]
        recorded_outputs: list[tuple[str, bool]] = []
        if texts:
            cut = any(
                doubtful(t, limit.get("max_output_tokens"))
                for t, limit in zip(texts, limits, strict=True)
            )
            recorded_outputs.append((output, cut))
        info = self.side_commands.get(call.tool_call_id)
        if isinstance(info, Mapping):
            recorded = info.get("exit_code")
            if isinstance(recorded, int) and not isinstance(recorded, bool):
                outcome = Outcome.OK if recorded == 0 else Outcome.FAILED
                status = replace(status, outcome=outcome, exit_code=recorded)
            if isinstance(info.get("output"), str):
                output = info["output"]
                recorded_outputs.append((output, doubtful(output)))
            if isinstance(info.get("cwd"), str) and info["cwd"].startswith("/"):
                cwd = info["cwd"]
        certain = status.outcome in (Outcome.OK, Outcome.UNKNOWN)
        found: list[fx.FoundCheck] = []
        if status.outcome is not Outcome.NOT_RUN:
            run = fx.run_script(op.script, cwd, _Files(self, certain=certain), output)
            found = run.checks
            if self.persistent:
                self.shell_cwd = run.cwd
        if status.outcome is Outcome.OK and status.exit_code == 0:
            self.shell_read(call, op.script, cwd, recorded_outputs)
        check = _pick_check(found, self.paths)
        command = ShellCommand(
            index=len(self.commands),
            event_index=len(self.events),
            step_index=call.step_index,
            step_id=call.step_id,
            tool_call_id=call.tool_call_id,
            command=op.script,
            cwd=self.paths.relative_dir(cwd),
            cwd_abs=cwd,
            output=output,
            exit_code=status.exit_code,
            check=check,
        )
        self.commands.append(command)
        return command.index

    def shell_read(
        self,
        call: _Call,
        script: str,
        cwd: str | None,
        recorded_outputs: Sequence[tuple[str, bool]],
    ) -> None:
        """A command that exited 0 and only read one file: what it showed (see ``reads``)."""
        read = parse_read(script)
        if read is None:
            return
        for directory in read.cd:
            if cwd is None and not directory.startswith("/"):
                return
            cwd = self.paths.absolute(directory, cwd)
        if cwd is None and not read.path.startswith("/"):
            return  # relative to a directory the replay lost track of
        target = self.resolve(read.path, cwd)
        if target.flagged:
            return  # outside the project: a read there says nothing about it
        content: str | None = None
        # Codex's PTY mode (tty: true) turns every newline into CR LF on the way out.
        if self.verbatim and call.args.get("tty") is not True:
            shown = {text for text, cut in recorded_outputs if not cut}
            if len(shown) == 1:
                content = interpret(read, shown.pop())
        if content is None:
            self.observe(target, None, f"read in part by {read.program}")
        else:
            self.observe(target, content, f"read in full by {read.program}")

    # -- file tools ----------------------------------------------------------------------------

    def file_tool(self, call: _Call, op: Op) -> None:
        result = call.result
        outcome = tool_status(result, patch=isinstance(op, CodexPatchOp | ChangeListOp))
        if outcome in (Outcome.FAILED, Outcome.NOT_RUN):
            return
        done = outcome is Outcome.OK
        cwd = self.call_cwd(call)
        side = result.side if result is not None and isinstance(result.side, Mapping) else {}
        if isinstance(op, WriteOp):
            target = self.resolve(op.path, cwd)
            if done and not side.get("userModified"):
                self.write(target, op.content, "written")
            else:
                self.lose(target, "write whose outcome is unknown")
        elif isinstance(op, EditOp):
            self.edit(self.resolve(op.path, cwd), op, side, done)
        elif isinstance(op, InsertOp):
            target = self.resolve(op.path, cwd)
            base = self.text_of(target)
            if not done or base is None:
                self.lose(target, "insert into content the replay does not know")
            else:
                lines = base.split("\n")
                at = min(max(op.line, 0), len(lines))
                self.write(
                    target, "\n".join([*lines[:at], *op.text.split("\n"), *lines[at:]]), "insert"
                )
        elif isinstance(op, ReadOp):
            if done and result is not None:
                self.read(self.resolve(op.path, cwd), op, result)
        elif isinstance(op, CodexPatchOp):
            reported = self.side_patches.get(call.tool_call_id)
            if isinstance(reported, Mapping):
                self.side_patch(reported)
            else:
                self.codex_patch(op.text, cwd, certain=done)
        elif isinstance(op, ChangeListOp):
            for path, kind in op.changes:
                target = self.resolve(path, cwd)
                if kind == "delete" and done:
                    self.delete(target)
                else:
                    self.lose(target, f"apply_patch {kind} (content not recorded)")
        elif isinstance(op, DeleteOp):
            target = self.resolve(op.path, cwd)
            if done:
                self.delete(target)
            else:
                self.lose(target, "delete whose outcome is unknown")
        elif isinstance(op, LostOp):
            if op.path is None:
                self.lose_tree("", op.reason)
            else:
                self.lose(self.resolve(op.path, cwd), op.reason)

    def edit(self, target: Resolved, op: EditOp, side: Mapping[str, Any], done: bool) -> None:
        if not done or side.get("userModified"):
            self.lose(target, "edit whose outcome is unknown")
            return
        original = side.get("originalFile")
        base = original if isinstance(original, str) else self.text_of(target)
        if base is None:
            if all(e.old == "" for e in op.edits) and target.key not in self.files:
                base = ""  # an empty old string creates a file that did not exist
            else:
                self.lose(target, "edit on content the replay does not know")
                return
        new = _apply_edits(base, op.edits)
        if new is None and "structuredPatch" in side:
            try:
                new = apply_hunks(base, hunks_from_structured_patch(side["structuredPatch"]))
            except PatchError:
                new = None
        if new is None:
            self.lose(target, "edit did not match the known content")
            return
        self.write(target, new, "edited")

    def read(self, target: Resolved, op: ReadOp, result: Result) -> None:
        if result.media:
            return
        side = result.side if isinstance(result.side, Mapping) else {}
        file_info = side.get("file") if isinstance(side.get("file"), Mapping) else None
        full: bool
        text: str | None
        if file_info is not None and isinstance(file_info.get("content"), str):
            text = file_info["content"]
            start = file_info.get("startLine", 1)
            shown, total = file_info.get("numLines"), file_info.get("totalLines")
            full = start in (0, 1) and (
                not isinstance(total, int) or not isinstance(shown, int) or shown >= total
            )
        elif op.style == "plain":
            text = result.text
            truncated = bool(_PLAIN_TRUNCATED.search(text) or _TRIMMED.search(text))
            full = (op.offset or 1) <= 1 and not truncated
        else:
            text, full = _numbered(result.text, op)
        if text is None:
            return
        if full:
            self.observe(target, text, "read in full")
        else:
            self.observe(target, None, "read in part")

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

    def side_patch(self, reported: Mapping[str, Any]) -> None:
        """Apply what Codex reported applying (patch_apply_end): per-file content or diffs."""
        if reported.get("success") is False:
            return
        changes = _mapping(reported.get("changes"))
        for path, change in changes.items():
            change = _mapping(change)
            target = self.resolve(str(path), self.paths.root)
            kind = change.get("type")
            if kind == "delete":
                self.delete(target)
                continue
            destination = target
            if isinstance(change.get("move_path"), str):
                destination = self.resolve(change["move_path"], self.paths.root)
            if kind == "add" and isinstance(change.get("content"), str):
                self.write(destination, change["content"], "apply_patch added the file")
                continue
            base = self.text_of(target)
            new: str | None = None
            if base is not None and isinstance(change.get("unified_diff"), str):
                try:
                    new = apply_hunks(base, hunks_from_diff_body(change["unified_diff"]))
                except PatchError:
                    new = None
            if destination.key != target.key:
                self.delete(target)
            if new is None:
                why = "unknown" if base is None else "did not match the known"
                self.lose(destination, f"apply_patch update on {why} content")
            else:
                self.write(destination, new, "apply_patch updated the file")

    def codex_patch(self, text: str, cwd: str | None, *, certain: bool) -> None:
        try:
            file_ops = parse_codex_patch(text)
        except PatchError:
            named = re.findall(
                r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", text, re.M
            )
            paths = [a or b for a, b in named]
            if not paths:
                self.lose_tree(self.paths.tree_dir(cwd), "apply_patch the replay cannot read")
            for path in paths:
                self.lose(self.resolve(path, cwd), "apply_patch the replay cannot read")
            return
        for file_op in file_ops:
            target = self.resolve(file_op.path, cwd)
            if not certain:
                self.lose(target, "apply_patch whose outcome is unknown")
                if file_op.move_to:
                    self.lose(
                        self.resolve(file_op.move_to, cwd), "apply_patch whose outcome is unknown"
                    )
                continue
            if file_op.kind == "add":
                self.write(target, file_op.content, "apply_patch added the file")
            elif file_op.kind == "delete":
                self.delete(target)
            else:
                destination = self.resolve(file_op.move_to, cwd) if file_op.move_to else target
                base = self.text_of(target)
                new: str | None = None
                if base is not None:
                    try:
                        new = apply_codex_chunks(base, file_op.chunks)
                    except PatchError:
                        new = None
                if file_op.move_to:
                    self.delete(target)
                if new is None:
                    why = "unknown" if base is None else "did not match the known"
                    self.lose(destination, f"apply_patch update on {why} content")
                else:
                    self.write(destination, new, "apply_patch updated the file")

    def unified_patch(
        self, text: str | None, base_dir: str | None, strip: int, certain: bool
    ) -> None:
        if text is None:
            self.lose_tree(self.paths.tree_dir(base_dir), "patch whose content is not recorded")
            return
        try:
            files = parse_unified(text, strip)
        except PatchError:
            self.lose_tree(self.paths.tree_dir(base_dir), "patch the replay cannot read")
            return
        for patched in files:
            source = self.resolve(patched.source, base_dir) if patched.source else None
            target = self.resolve(patched.target, base_dir) if patched.target else None
            if not certain:
                for where in (source, target):
                    if where is not None:
                        self.lose(where, "patch whose outcome is unknown")
                continue
            if target is None and source is not None:
                self.delete(source)
                continue
            assert target is not None
            if source is None:
                self.write(target, patched.added_content or "", "patch added the file")
                continue
            base = self.text_of(source)
            new = None
            if base is not None:
                try:
                    new = apply_hunks(base, patched.hunks)
                except PatchError:
                    new = None
            if source.key != target.key:
                self.delete(source)
            if new is None:
                self.lose(target, "patch on content the replay does not know")
            else:
                self.write(target, new, "patched")

    # -- state primitives ----------------------------------------------------------------------

    def resolve(self, raw: str, cwd: str | None) -> Resolved:
        return self.paths.resolve(raw, cwd)

    def text_of(self, target: Resolved) -> str | None:
        if target.flagged:
            return None
        entry = self.files.get(target.key)
        if entry is None or entry.status is not Status.KNOWN or entry.sha is None:
            return None
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
        apply_value(self.files, target.key, change_value(change))
        if change.kind is ChangeKind.DELETED:
            if is_tree(target.key):
                directory = tree_dir(target.key)
                self.dirs = {d for d in self.dirs if not (d == directory or under(d, directory))}
            else:
                self.absent.add(target.key)
        elif not is_tree(target.key):
            self.absent.discard(target.key)

    def write(self, target: Resolved, text: str, reason: str, *, observed: bool = False) -> None:
        if target.flagged:
            self.set(target, Change(ChangeKind.WRITTEN, None, reason, observed=observed))
            return
        current = self.files.get(target.key)
        sha = self.blobs.put(text.encode("utf-8", "surrogatepass"))
        self.texts[sha] = text
        if current is not None and current.status is Status.KNOWN and current.sha == sha:
            return  # nothing new learned (a re-read, an edit that changed nothing)
        self.set(target, Change(ChangeKind.WRITTEN, sha, reason, observed=observed))

    def lose(self, target: Resolved, reason: str) -> None:
        self.set(target, Change(ChangeKind.LOST, reason=reason))

    def delete(self, target: Resolved) -> None:
        self.set(target, Change(ChangeKind.DELETED))

    def lose_tree(self, directory: str | None, reason: str) -> None:
        if directory is None:
            return  # outside the project
        self.set(Resolved(tree_key(directory), None), Change(ChangeKind.LOST, reason=reason))

    def is_dir(self, key: str) -> bool | None:
        if key == "" or key in self.dirs:
            return True
        prefix = key + "/"
        if any(k.startswith(prefix) for k in self.files):
            return True
        if key in self.files:
            return False
        return None


class _Files:
    """The engine as the shell walker sees it (effects.Files)."""

    def __init__(self, engine: _Engine, *, certain: bool) -> None:
        self.engine = engine
        self.certain = certain

    def text(self, path: str) -> str | None:
        return self.engine.text_of(self.engine.paths.of_abs(path))

    def is_dir(self, path: str) -> bool | None:
        resolved = self.engine.paths.of_abs(path)
        return None if resolved.flagged else self.engine.is_dir(resolved.key)

    def absolute(self, raw: str, cwd: str | None) -> str | None:
        return self.engine.paths.absolute(raw, cwd)

    def apply(self, effect: fx.Effect) -> None:
        engine, paths = self.engine, self.engine.paths
        if isinstance(effect, fx.LostTree):
            engine.lose_tree(paths.tree_dir(effect.directory), effect.reason)
        elif isinstance(effect, fx.Write):
            self._write(effect)
        elif isinstance(effect, fx.Delete):
            target = paths.of_abs(effect.path)
            kind = None if target.flagged else engine.is_dir(target.key)
            recursive = effect.recursive and kind is not False
            if kind is True and not recursive:
                return  # rm without -r refuses a directory
            if not self.certain:
                engine.lose(target, "removal whose outcome is unknown")
                if recursive:
                    engine.lose_tree(
                        paths.tree_dir(effect.path), "removal whose outcome is unknown"
                    )
                return
            if recursive and not target.flagged:
                engine.set(Resolved(tree_key(target.key), None), Change(ChangeKind.DELETED))
            engine.delete(target)
        elif isinstance(effect, fx.GlobEffect):
            self._glob(effect)
        elif isinstance(effect, fx.Move | fx.Copy):
            self._transfer(effect)
        elif isinstance(effect, fx.MakeDir):
            target = paths.of_abs(effect.path)
            if not target.flagged:
                engine.dirs.add(target.key)
        elif isinstance(effect, fx.Touch):
            target = paths.of_abs(effect.path)
            if self.certain and target.key in engine.absent:
                engine.write(target, "", "created empty by touch")
        elif isinstance(effect, fx.CodexPatch):
            engine.codex_patch(effect.text, effect.base, certain=self.certain)
        elif isinstance(effect, fx.UnifiedPatch):
            engine.unified_patch(effect.text, effect.base, effect.strip, self.certain)

    def _write(self, effect: fx.Write) -> None:
        engine = self.engine
        target = engine.paths.of_abs(effect.path)
        content = effect.content
        if content is not None and effect.append:
            base = engine.text_of(target)
            if base is None and not target.flagged and target.key in engine.absent:
                base = ""
            content = None if base is None else base + content
        if content is None or not self.certain:
            engine.lose(target, effect.reason or "written by a shell command")
        else:
            engine.write(target, content, effect.reason or "written by a shell command")

    def _glob(self, effect: fx.GlobEffect) -> None:
        engine = self.engine
        pattern = engine.paths.of_abs(effect.pattern)
        if pattern.flagged:
            return
        parts = pattern.key.split("/")
        for key in [k for k in engine.files if not is_tree(k)]:
            key_parts = key.split("/")
            if len(key_parts) < len(parts) or not _glob_match(parts, key_parts[: len(parts)]):
                continue
            if len(key_parts) > len(parts) and not effect.recursive:
                continue
            target = Resolved(key, None)
            if effect.delete and self.certain:
                engine.delete(target)
            else:
                engine.lose(target, effect.reason)

    def _transfer(self, effect: fx.Move | fx.Copy) -> None:
        engine, paths = self.engine, self.engine.paths
        src, dst = paths.of_abs(effect.src), paths.of_abs(effect.dst)
        moving = isinstance(effect, fx.Move)
        into = effect.into_dir or (not dst.flagged and engine.is_dir(dst.key) is True)
        target = (
            paths.of_abs(posixpath.join(effect.dst, posixpath.basename(effect.src)))
            if into
            else dst
        )
        src_is_dir = not src.flagged and (engine.is_dir(src.key) is True)
        reason = "moved" if moving else "copied"
        if src_is_dir:
            if isinstance(effect, fx.Copy) and not effect.recursive:
                return  # cp without -r refuses directories
            inside = [k for k in engine.files if under(k, src.key)]
            for key in inside:
                rel = key[len(src.key) + 1 :]
                if is_tree(key):
                    destination = target.key + "/" + rel if target.key else rel
                    if not target.flagged:
                        engine.set(
                            Resolved(destination, None), Change(ChangeKind.LOST, reason=reason)
                        )
                    continue
                destination_path = posixpath.join(target.abs or effect.dst, rel)
                self._place(paths.of_abs(destination_path), engine.files[key], reason)
            if moving and self.certain:
                engine.set(Resolved(tree_key(src.key), None), Change(ChangeKind.DELETED))
                engine.dirs.discard(src.key)
            elif moving:
                engine.lose_tree(src.key, "move whose outcome is unknown")
            if not target.flagged:
                engine.dirs.add(target.key)
            return
        self._place(target, None if src.flagged else engine.files.get(src.key), reason)
        if moving:
            if self.certain:
                engine.delete(src)
            else:
                engine.lose(src, "move whose outcome is unknown")

    def _place(self, target: Resolved, entry: Entry | None, reason: str) -> None:
        engine = self.engine
        if entry is not None and entry.status is Status.KNOWN and entry.sha and self.certain:
            if target.flagged:
                engine.set(target, Change(ChangeKind.WRITTEN, None, reason))
            elif engine.files.get(target.key) != entry:
                engine.set(target, Change(ChangeKind.WRITTEN, entry.sha, reason))
        else:
            engine.lose(target, f"{reason} from content the replay does not know")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _glob_match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """Shell globbing per path segment: `*` stays inside a segment and skips dotfiles."""
    for pat, part in zip(pattern, parts, strict=True):
        if pat == part:
            continue
        if part.startswith(".") and not pat.startswith("."):
            return False
        if not fnmatch.fnmatchcase(part, pat):
            return False
    return True


def _apply_edits(base: str, edits: Sequence[Any]) -> str | None:
    text = base
    for edit in edits:
        if edit.old == "":
            if text != "":
                return None
            text = edit.new
            continue
        if edit.old not in text:
            return None
        text = (
            text.replace(edit.old, edit.new)
            if edit.replace_all
            else text.replace(edit.old, edit.new, 1)
        )
    return text


def _numbered(text: str, op: ReadOp) -> tuple[str | None, bool]:
    """Strip `cat -n` prefixes: (content, whether it is the whole file); (None, _) if not cat -n."""
    body = _EDITOR_HEADER.sub("", text, count=1)
    body = _REMINDER.sub("", body)
    if not body.strip():
        if _EMPTY_FILE.search(text) and (op.offset or 1) <= 1:
            return "", True
        return None, False
    lines: list[str] = []
    first = expected = None
    for line in body.split("\n"):
        match = _NUMBERED.match(line)
        if match is None:
            return None, False  # not a file listing ("File unchanged since last read", …)
        number = int(match.group(1))
        if first is None:
            first = expected = number
        if number != expected:
            return None, False
        expected = number + 1
        lines.append(match.group(2))
    shown = len(lines)
    full = (
        not _TRIMMED.search(body)
        and first == 1
        and (op.offset or 1) <= 1
        and (op.limit is None or shown < op.limit)
        and shown < _READ_LINE_CAP
        and all(len(line) < _READ_LINE_CAP for line in lines)
    )
    return "\n".join(lines), full


def _pick_check(found: Sequence[fx.FoundCheck], paths: Paths) -> Check | None:
    if not found:
        return None
    best = min(found, key=lambda f: _CHECK_PRIORITY.index(f.spec.kind))
    spec: CheckSpec = best.spec
    cwd = best.cwd
    if spec.chdir is not None:
        cwd = paths.absolute(spec.chdir, cwd) if cwd is not None else None
    return Check(
        kind=spec.kind,
        language=spec.language,
        runner=spec.runner,
        segment=best.segment,
        cwd=paths.relative_dir(cwd),
        target=spec.target,
        masked=best.masked,
    )
