"""Codex rollouts: converted by atif-make, plus what replay needs that it drops.

atif-make reads ``response_item`` lines and, of the ``event_msg`` stream, only
token counts. What a command did is mostly in the parts it leaves out:

* ``exec_command`` output often arrives through later ``write_stdin`` polls on
  the same unified-exec session, with the exit status only in the last poll or
  in the ``exec_command_end`` event (which also has the full output and cwd);
* ``patch_apply_end`` says whether an ``apply_patch`` applied and, per absolute
  path, what changed (the patch text itself is kept by atif-make as the call's
  ``{"input": ...}``);
* in code mode every tool runs *inside* one ``exec`` call (JavaScript calling
  ``tools.exec_command(...)``), so the nested commands exist only as events
  whose call ids appear nowhere in the response items;
* some rollouts record what the user typed only as ``event_msg/user_message``,
  which leaves the ATIF with no user turns at all. Those messages are inserted
  as user steps, by timestamp, with ``extra.inserted_from`` saying so, and the
  insertion is listed in ``side_data["normalised"]``.

atif-make also takes the session id from ``session_meta.session_id``, which only
thread rollouts carry; a rollout's own id is ``session_meta.id``, so where
atif-make fell back to the file name the id is put right (and listed too).
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .converter import Beside, run_atif_make, strip_subagents
from .folders import CODEX_DIRECT, Folders
from .meta import Hints, recorded_git
from .model import IngestError
from .source import Source

LABEL = "Codex rollout"
SHELL_TOOLS = frozenset({"exec_command", "shell", "shell_command", "local_shell", "container.exec"})
POLL_TOOL = "write_stdin"
WRAPPER_TOOL = "exec"  # code mode's single outer tool

_RUNNING = re.compile(r"^Process running with session ID (\d+)", re.MULTILINE)
_EXITED = re.compile(r"^Process exited with code (-?\d+)", re.MULTILINE)
_OUTPUT = "Output:\n"
_REQUEST = "## My request for Codex:"


def convert_codex(
    source: Source, variant: str, folders: Folders
) -> tuple[dict[str, Any], dict[str, Any], Hints]:
    for record in source.records:
        if not isinstance(record.value, dict):
            raise IngestError(source.path, f"line {record.line} is not a JSON object", record.line)
    beside = _beside(source, variant, folders)
    document, media, notes = run_atif_make(source, variant, LABEL, beside)
    _require_finite_arguments(document, source.path)
    side: dict[str, Any] = {"media": media} if media else {}
    if variant != "codex-rollout":
        return document, side, Hints()

    scan = _Scan()
    for record in source.records:
        scan.read(record.value)
    side.update(
        cwd=scan.cwd,
        commands=scan.finished_commands(),
        polls=scan.polls,
        patches=scan.patches,
    )
    if scan.nested:
        side["nested_calls"] = scan.nested
    if scan.git:
        side["git"] = scan.git
    repairs = notes
    inserted = _insert_user_messages(document, scan.user_messages)
    if inserted:
        repairs.append(
            f"inserted {inserted} user step(s) from event_msg/user_message: "
            "the rollout has no response_item for them"
        )
    own_id = scan.meta.get("id")
    if isinstance(own_id, str) and own_id and document.get("session_id") == source.path.stem:
        document["session_id"] = own_id
        repairs.append("session_id set from session_meta.id instead of the file name")
    if repairs:
        side["normalised"] = repairs
    subagents = strip_subagents(document, lambda sub: _thread_file(source.path, sub, folders))
    if subagents:
        side["subagents"] = subagents

    meta = scan.meta
    origin = meta.get("source")
    parent = meta.get("parent_thread_id")
    parent = parent if isinstance(parent, str) else None
    hints = Hints(
        session_id=meta["id"] if isinstance(meta.get("id"), str) else None,
        cwd=meta["cwd"] if isinstance(meta.get("cwd"), str) else None,
        titles=tuple(_request(text) for text, _ in scan.user_messages),
        parent_session_id=parent,
        is_subagent=bool(parent) or (isinstance(origin, dict) and "subagent" in origin),
    )
    return document, side, hints


def _beside(source: Source, variant: str, folders: Folders) -> Beside:
    """The rollouts beside this one that atif-make reads as its threads.

    It reads the header of every ``rollout-*.jsonl`` in the folder for each file it
    converts; from the folder's headers, read once, the threads of this rollout
    (and theirs) are known, and a view holding only them gives the same result.
    """
    if variant != "codex-rollout":
        return Beside(direct=True)
    path = source.path
    rollouts = folders.rollouts(path.parent)
    near = len(rollouts) - (path.name in rollouts) <= CODEX_DIRECT
    if near and not source.needs_clean_copy:
        return Beside(direct=True)
    # atif-make takes the rollout's id from its last session_meta.
    meta: dict[str, Any] = {}
    for record in source.records:
        line = record.value
        if line.get("type") == "session_meta" and isinstance(line.get("payload"), dict):
            meta = line["payload"]
    own = meta.get("id") or meta.get("session_id")
    descendants = folders.codex_descendants(path, own if isinstance(own, str) else None)
    return Beside(direct=near, neighbours=descendants)


class _Scan:
    """One pass over the rollout's lines, collecting what atif-make leaves out."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.git: dict[str, str] = {}  # the first session_meta's: where the session started
        self.turn_cwd: str | None = None
        self.cwd: dict[str, str] = {}
        self.commands: dict[str, dict[str, Any]] = {}
        self.polls: dict[str, str] = {}
        self.patches: dict[str, dict[str, Any]] = {}
        self.nested: dict[str, list[str]] = {}
        self.user_messages: list[tuple[str, str | None]] = []
        self._calls: set[str] = set()
        self._sessions: dict[str, str] = {}  # unified-exec session id -> the exec call
        self._chunks: dict[str, list[str]] = {}
        self._ended: set[str] = set()
        self._wrapper: str | None = None

    def read(self, line: dict[str, Any]) -> None:
        payload = line.get("payload")
        if not isinstance(payload, dict):
            return
        envelope = line.get("type")
        kind = payload.get("type")
        if envelope == "session_meta":
            self.meta = payload
            self.turn_cwd = _str(payload.get("cwd")) or self.turn_cwd
            git = payload.get("git")
            if not self.git and isinstance(git, dict):
                self.git = recorded_git(
                    git.get("commit_hash"), git.get("branch"), git.get("repository_url")
                )
        elif envelope == "turn_context":
            self.turn_cwd = _str(payload.get("cwd")) or self.turn_cwd
        elif envelope == "response_item" and kind in ("function_call", "custom_tool_call"):
            self._call(payload)
        elif envelope == "response_item" and kind in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            self._output(payload)
        elif envelope == "event_msg" and kind == "exec_command_end":
            self._exec_end(payload)
        elif envelope == "event_msg" and kind == "patch_apply_end":
            self._patch_end(payload)
        elif envelope == "event_msg" and kind == "user_message":
            text = payload.get("message")
            if isinstance(text, str) and text.strip():
                self.user_messages.append((text, _str(line.get("timestamp"))))

    def _call(self, payload: dict[str, Any]) -> None:
        call_id = _str(payload.get("call_id")) or _str(payload.get("id"))
        if call_id is None:
            return
        self._calls.add(call_id)
        name = _str(payload.get("name"))
        args = _arguments(payload)
        if self.turn_cwd:
            self.cwd[call_id] = self.turn_cwd
        if name in SHELL_TOOLS:
            workdir = _str(args.get("workdir"))
            if workdir:
                self.cwd[call_id] = workdir
            self.commands[call_id] = _command(
                args.get("cmd", args.get("command")), workdir or self.turn_cwd
            )
        elif name == POLL_TOOL:
            owner = self._sessions.get(str(args.get("session_id")))
            if owner is not None:
                self.polls[call_id] = owner
                self.commands[owner]["polls"].append(call_id)
        elif name == WRAPPER_TOOL:
            self._wrapper = call_id

    def _output(self, payload: dict[str, Any]) -> None:
        call_id = payload.get("call_id")
        if not isinstance(call_id, str):
            return
        owner = call_id if call_id in self.commands else self.polls.get(call_id)
        if owner is None or owner in self._ended:
            return
        command = self.commands[owner]
        text = _text(payload.get("output"))
        shell = _shell_json(text)
        if shell is not None:
            # The older `shell` tool answers {"output": ..., "metadata": {"exit_code": N}}.
            output, metadata = shell
            if isinstance(metadata.get("exit_code"), int):
                command["exit_code"] = metadata["exit_code"]
            self._chunks.setdefault(owner, []).append(output)
            return
        header, body = _split_output(text)
        running = _RUNNING.search(header)
        if running:
            self._sessions[running.group(1)] = owner
        exited = _EXITED.search(header)
        if exited:
            command["exit_code"] = int(exited.group(1))
        self._chunks.setdefault(owner, []).append(body)

    def _nested_under_wrapper(self, call_id: str) -> dict[str, Any]:
        """The record of a call the response items never named (code mode)."""
        if call_id not in self._calls and self._wrapper is not None:
            self.nested.setdefault(self._wrapper, []).append(call_id)
            return {"parent_call_id": self._wrapper}
        return {}

    def _exec_end(self, payload: dict[str, Any]) -> None:
        call_id = _str(payload.get("call_id"))
        if call_id is None:
            return
        command = self.commands.get(call_id)
        if command is None:
            command = _command(payload.get("command"), None)
            command.update(self._nested_under_wrapper(call_id))
            self.commands[call_id] = command
        if isinstance(payload.get("exit_code"), int):
            command["exit_code"] = payload["exit_code"]
        cwd = _str(payload.get("cwd"))
        if cwd:
            command["cwd"] = cwd
            self.cwd[call_id] = cwd
        output = payload.get("aggregated_output")
        if not isinstance(output, str):
            output = _text(payload.get("stdout")) + _text(payload.get("stderr"))
        command["output"] = output
        self._ended.add(call_id)

    def _patch_end(self, payload: dict[str, Any]) -> None:
        call_id = _str(payload.get("call_id"))
        if call_id is None:
            return
        patch: dict[str, Any] = {
            "success": payload.get("success"),
            "changes": payload.get("changes"),
            "stdout": payload.get("stdout"),
            "stderr": payload.get("stderr"),
        }
        patch.update(self._nested_under_wrapper(call_id))
        self.patches[call_id] = patch

    def finished_commands(self) -> dict[str, dict[str, Any]]:
        for call_id, command in self.commands.items():
            if call_id not in self._ended and call_id in self._chunks:
                command["output"] = "".join(self._chunks[call_id])
        return self.commands


def _require_finite_arguments(document: dict[str, Any], path: Path) -> None:
    """Arguments are JSON inside a JSON string, decoded by atif-make without our checks."""
    arguments = [
        call.get("arguments")
        for step in document.get("steps") or ()
        for call in step.get("tool_calls") or ()
    ]
    try:
        json.dumps(arguments, allow_nan=False)
    except ValueError:
        raise IngestError(
            path, "a tool call's arguments hold a number JSON cannot store (NaN or infinity)"
        ) from None


def _command(command: Any, cwd: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "command": _script(command),
        "cwd": cwd,
        "exit_code": None,
        "output": None,
    }
    if isinstance(command, list):
        entry["argv"] = command
    entry["polls"] = []
    return entry


def _script(command: Any) -> str | None:
    """The shell text of a command, whether it came as a string or as an argv."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(part, str) for part in command):
        return None
    # ["/bin/zsh", "-lc", "npm test"]: the script is what the shell was asked to run.
    if len(command) >= 3 and command[-2] in ("-c", "-lc", "-ic"):
        return command[-1]
    return shlex.join(command)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        return "".join(
            part["text"]
            for part in value
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _arguments(payload: dict[str, Any]) -> dict[str, Any]:
    arguments = payload.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
    if isinstance(arguments, dict):
        return arguments
    return {"input": payload["input"]} if "input" in payload else {}


def _shell_json(text: str) -> tuple[str, dict[str, Any]] | None:
    if not text.startswith('{"output"'):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("output"), str):
        return None
    metadata = data.get("metadata")
    return data["output"], metadata if isinstance(metadata, dict) else {}


def _split_output(text: str) -> tuple[str, str]:
    """Unified exec's reply: a header (chunk id, wall time, status), then ``Output:``."""
    if text.startswith(_OUTPUT):
        return "", text[len(_OUTPUT) :]
    at = text.find("\n" + _OUTPUT)
    if at < 0:
        return "", text
    return text[:at], text[at + 1 + len(_OUTPUT) :]


def _request(text: str) -> str:
    """The user's words, without the file list the Codex TUI puts before them."""
    _, marker, rest = text.partition(_REQUEST)
    return rest if marker else text


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    # A timestamp without an offset is read as UTC so that it can be compared.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _insert_user_messages(document: dict[str, Any], messages: list[tuple[str, str | None]]) -> int:
    steps: list[dict[str, Any]] = document.get("steps") or []
    said = [
        step["message"]
        for step in steps
        if step.get("source") == "user" and isinstance(step.get("message"), str)
    ]
    missing = []
    for text, stamp in messages:
        moment = _moment(stamp)
        wanted = text.strip()
        if moment is None or any(wanted in message for message in said):
            continue
        missing.append((moment, text, stamp))
    if not missing:
        return 0
    missing.sort(key=lambda item: item[0])
    merged: list[dict[str, Any]] = []
    waiting = iter(missing)
    pending = next(waiting, None)
    for step in steps:
        moment = _moment(step.get("timestamp"))
        while pending is not None and moment is not None and pending[0] < moment:
            merged.append(_user_step(pending[1], pending[2]))
            pending = next(waiting, None)
        merged.append(step)
    while pending is not None:
        merged.append(_user_step(pending[1], pending[2]))
        pending = next(waiting, None)
    for number, step in enumerate(merged, start=1):
        step["step_id"] = number
    document["steps"] = merged
    if isinstance(document.get("final_metrics"), dict):
        document["final_metrics"]["total_steps"] = len(merged)
    return len(missing)


def _user_step(text: str, stamp: str | None) -> dict[str, Any]:
    step: dict[str, Any] = {"step_id": 0, "source": "user", "message": text}
    if stamp:
        step["timestamp"] = stamp
    step["extra"] = {"inserted_from": "event_msg/user_message"}
    return step


def _thread_file(path: Path, sub: dict[str, Any], folders: Folders) -> str | None:
    thread = (sub.get("extra") or {}).get("thread_id")
    # The id comes from the log; only a plain name may become part of a pattern.
    if not isinstance(thread, str) or not thread or set(thread) & {"/", "\\", "\x00"}:
        return None
    return folders.codex_thread_file(path.parent, thread)
