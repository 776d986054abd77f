"""Reading a tool call as a file operation, whatever agent made it.

Tool names and argument names differ per agent (Claude Code ``Edit{file_path, old_string}``, pi
``edit{path, oldText}`` or ``edit{path, edits[]}``, Codex ``exec_command{cmd, workdir}``,
Harbor terminus ``bash_command{keystrokes}``, the Anthropic text editor ``str_replace_editor``
…); this module maps them all onto a handful of operations the engine knows how to replay.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ShellOp:
    script: str
    workdir: str | None = None


@dataclass(frozen=True, slots=True)
class PollOp:
    """Codex write_stdin: more output (and maybe the exit status) of an earlier command."""

    session: int


@dataclass(frozen=True, slots=True)
class WriteOp:
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class Edit:
    old: str
    new: str
    replace_all: bool = False


@dataclass(frozen=True, slots=True)
class EditOp:
    path: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class InsertOp:
    path: str
    line: int  # insert after this many lines (0 = at the top)
    text: str


@dataclass(frozen=True, slots=True)
class ReadOp:
    path: str
    offset: int | None
    limit: int | None
    style: str  # "numbered" (cat -n output), "plain" (the text itself)


@dataclass(frozen=True, slots=True)
class CodexPatchOp:
    text: str


@dataclass(frozen=True, slots=True)
class ChangeListOp:
    """`codex exec --json` file changes: which paths were added, updated or deleted."""

    changes: tuple[tuple[str, str], ...]  # (path, kind)


@dataclass(frozen=True, slots=True)
class DeleteOp:
    path: str


@dataclass(frozen=True, slots=True)
class LostOp:
    path: str | None  # None: anything under the root may have changed
    reason: str


@dataclass(frozen=True, slots=True)
class NoOp:
    pass


Op = (
    ShellOp
    | PollOp
    | WriteOp
    | EditOp
    | InsertOp
    | ReadOp
    | CodexPatchOp
    | ChangeListOp
    | DeleteOp
    | LostOp
    | NoOp
)

_SHELL = {
    "bash",
    "shell",
    "exec_command",
    "exec",
    "local_shell",
    "container.exec",
    "bash_command",
    "execute_bash",
    "execute_command",
    "run_command",
    "run_terminal_cmd",
    "run_shell_command",
    "terminal",
    "shell_command",
    "run_in_terminal",
}
_WRITE = {"write", "write_file", "create_file", "writefile", "create"}
_EDIT = {"edit", "multiedit", "multi_edit", "replace", "str_replace", "edit_file_by_replace"}
_READ = {"read", "read_file", "view_file", "readfile", "open_file"}
_EDITOR = {"str_replace_editor", "str_replace_based_edit_tool", "text_editor", "edit_tool"}
_DELETE = {"delete_file", "remove_file", "delete"}
_POLL_ONLY = {"bashoutput", "taskoutput", "killshell", "killbash", "bash_output"}
# Subagents that can only read; any other subagent may edit files behind the parent's back.
_READ_ONLY_AGENTS = {"explore", "plan", "claude-code-guide", "statusline-setup"}
_PATH_KEYS = ("file_path", "path", "filePath", "target_file", "absolute_path", "filename", "file")
_WRITE_WORDS = re.compile(r"write|edit|patch|create|delete|remove|move|rename|replace|insert|save")

# Agents whose read tool returns the file's text as is (no line-number prefixes).
PLAIN_READ_AGENTS = {"pi", "openclaw", "gemini-cli", "gemini"}


def _first(args: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in args and args[key] is not None:
            return args[key]
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def script_of(command: Any) -> str | None:
    """A shell script from a ``command`` argument: a string, or an argv list."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        if (
            len(command) >= 3
            and command[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and re.fullmatch(r"-\w*c", command[1])
        ):
            return command[2]
        return shlex.join(command)
    return None


def classify(name: str, args: Mapping[str, Any], agent: str | None) -> Op:
    lowered = name.lower()
    agent_name = (agent or "").lower()
    path = _first(args, *_PATH_KEYS)
    path = path if isinstance(path, str) else None

    if lowered == "write_stdin":
        session = _int(args.get("session_id"))
        return PollOp(session) if session is not None else NoOp()
    if lowered in _POLL_ONLY:
        return NoOp()
    if lowered == "apply_patch" or (
        lowered in _SHELL
        and isinstance(args.get("input"), str)
        and "*** Begin Patch" in args["input"]
    ):
        text = _first(args, "input", "patch")
        if isinstance(text, str):
            return CodexPatchOp(text)
        changes = args.get("changes")
        if isinstance(changes, list):
            pairs = tuple(
                (c["path"], str(c.get("kind", "update")))
                for c in changes
                if isinstance(c, Mapping) and isinstance(c.get("path"), str)
            )
            return ChangeListOp(pairs)
        if isinstance(changes, Mapping):
            return ChangeListOp(tuple((p, "update") for p in changes if isinstance(p, str)))
        return LostOp(None, "apply_patch without a readable patch")
    if lowered in _SHELL:
        if "keystrokes" in args:
            keys = args.get("keystrokes")
            # Terminus types into a terminal: only keystrokes ending in Enter run a command;
            # anything else is input to whatever program is in the foreground.
            if not isinstance(keys, str) or not keys.endswith("\n"):
                return NoOp()
            return ShellOp(keys[:-1])
        script = script_of(_first(args, "command", "cmd", "script", "input"))
        if script is None:
            return NoOp()
        workdir = _first(args, "workdir", "cwd", "directory", "dir", "working_directory")
        return ShellOp(script, workdir if isinstance(workdir, str) else None)

    if lowered in _EDITOR:
        return _editor(args, path)
    if lowered == "notebookedit":
        notebook = _first(args, "notebook_path", *_PATH_KEYS)
        return LostOp(notebook if isinstance(notebook, str) else None, "notebook cell edited")
    if lowered in ("task", "agent"):
        kind = str(args.get("subagent_type") or "").lower()
        if kind in _READ_ONLY_AGENTS:
            return NoOp()
        return LostOp(None, f"subagent {kind or 'task'} may have edited files")
    if path is None:
        return NoOp()
    if lowered in _WRITE:
        content = _first(args, "content", "file_text", "contents", "text")
        return WriteOp(path, content) if isinstance(content, str) else LostOp(path, "write")
    if lowered in _EDIT:
        edits = _edits(args)
        return EditOp(path, edits) if edits else LostOp(path, f"{name} without readable edits")
    if lowered in _READ:
        offset = _int(_first(args, "offset", "start_line", "start_line_one_indexed", "line"))
        limit = _int(_first(args, "limit", "num_lines", "max_lines"))
        style = "plain" if agent_name in PLAIN_READ_AGENTS else "numbered"
        return ReadOp(path, offset, limit, style)
    if lowered in _DELETE:
        return DeleteOp(path)
    if lowered == "edit_file":  # Cursor: a sketch with "// ... existing code ..." markers
        return LostOp(path, "edit_file applies a sketch the replay cannot reproduce")
    if _WRITE_WORDS.search(lowered) and "todo" not in lowered:
        return LostOp(path, f"{name} may have changed the file")
    return NoOp()


def _edits(args: Mapping[str, Any]) -> tuple[Edit, ...]:
    raw_edits = args.get("edits")
    if isinstance(raw_edits, list):
        edits = []
        for raw in raw_edits:
            if not isinstance(raw, Mapping):
                return ()
            edit = _one_edit(raw)
            if edit is None:
                return ()
            edits.append(edit)
        return tuple(edits)
    edit = _one_edit(args)
    return (edit,) if edit is not None else ()


def _one_edit(raw: Mapping[str, Any]) -> Edit | None:
    old = _first(raw, "old_string", "oldText", "old_str", "old_text", "old")
    new = _first(raw, "new_string", "newText", "new_str", "new_text", "new")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return Edit(old, new, bool(raw.get("replace_all") or raw.get("replaceAll")))


def _editor(args: Mapping[str, Any], path: str | None) -> Op:
    command = args.get("command")
    if path is None:
        return NoOp()
    if command == "view":
        view_range = args.get("view_range")
        if isinstance(view_range, list) and len(view_range) == 2:
            start, end = _int(view_range[0]), _int(view_range[1])
            limit = end - start + 1 if start is not None and end is not None and end >= 0 else None
            return ReadOp(path, start, limit, "numbered")
        return ReadOp(path, None, None, "numbered")
    if command == "create":
        text = args.get("file_text")
        return WriteOp(path, text) if isinstance(text, str) else LostOp(path, "create")
    if command == "str_replace":
        edit = _one_edit(args)
        return EditOp(path, (edit,)) if edit is not None else LostOp(path, "str_replace")
    if command == "insert":
        line, text = _int(args.get("insert_line")), args.get("new_str")
        if line is None or not isinstance(text, str):
            return LostOp(path, "insert")
        return InsertOp(path, line, text)
    if command == "undo_edit":
        return LostOp(path, "undo_edit restores a version the trajectory does not show")
    return NoOp()
