"""File tools' calls as file changes: writes, edits, inserts, reads, patches and deletes.

    play_file_tool(state, call, EditOp(...), "/repo", side_patches={})

The tools arrive already classified (``tools.classify``: Claude Code Write/Edit/MultiEdit/Read,
pi write/edit/read, the text editor's create/str_replace/insert/view, Codex apply_patch and its
change lists, deletes, and tools that may have changed a file in ways nobody recorded). A tool
that failed changed nothing; one with no recorded result might have done its work, so what it
would have written is lost. Claude Code's side data makes edits and reads exact where present
(``originalFile``, ``structuredPatch``, ``file.content`` with its line counts, ``userModified``).

Reads are observations (``FileState.observe``): a full listing establishes content, a partial one
marks the file as seen in part.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .calls import ToolCall
from .patches import PatchError, apply_hunks, hunks_from_structured_patch
from .patching import codex_patch, side_patch
from .paths import Resolved
from .results import CallOutcome, Result, tool_status
from .state import FileState
from .tools import (
    ChangeListOp,
    CodexPatchOp,
    DeleteOp,
    EditOp,
    InsertOp,
    LostOp,
    Op,
    ReadOp,
    WriteOp,
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
# Text cut short before it reached the trajectory ("...[trimmed]" in some Harbor exports).
_TRIMMED = re.compile(r"(\[trimmed\]|\[truncated\]|\.\.\. ?\(truncated\))\s*$")


def play_file_tool(
    state: FileState,
    call: ToolCall,
    op: Op,
    cwd: str | None,
    *,
    side_patches: Mapping[str, Any],
) -> None:
    """Apply one file tool's call; ``side_patches`` are the patches Codex reported applying."""
    result = call.result
    outcome = tool_status(result, patch=isinstance(op, CodexPatchOp | ChangeListOp))
    if outcome in (CallOutcome.FAILED, CallOutcome.NOT_RUN):
        return
    done = outcome is CallOutcome.OK
    side = result.side if result is not None and isinstance(result.side, Mapping) else {}
    if isinstance(op, WriteOp):
        target = state.resolve(op.path, cwd)
        if done and not side.get("userModified"):
            state.write(target, op.content, "written")
        else:
            state.lose(target, "write whose outcome is unknown")
    elif isinstance(op, EditOp):
        _edit(state, state.resolve(op.path, cwd), op, side, done)
    elif isinstance(op, InsertOp):
        target = state.resolve(op.path, cwd)
        base = state.text_of(target)
        if not done or base is None:
            state.lose(target, "insert into content the replay does not know")
        else:
            lines = base.split("\n")
            at = min(max(op.line, 0), len(lines))
            state.write(
                target, "\n".join([*lines[:at], *op.text.split("\n"), *lines[at:]]), "insert"
            )
    elif isinstance(op, ReadOp):
        if done and result is not None:
            _read(state, state.resolve(op.path, cwd), op, result)
    elif isinstance(op, CodexPatchOp):
        reported = side_patches.get(call.tool_call_id)
        if isinstance(reported, Mapping):
            side_patch(state, reported)
        else:
            codex_patch(state, op.text, cwd, certain=done)
    elif isinstance(op, ChangeListOp):
        for path, kind in op.changes:
            target = state.resolve(path, cwd)
            if kind == "delete" and done:
                state.delete(target)
            else:
                state.lose(target, f"apply_patch {kind} (content not recorded)")
    elif isinstance(op, DeleteOp):
        target = state.resolve(op.path, cwd)
        if done:
            state.delete(target)
        else:
            state.lose(target, "delete whose outcome is unknown")
    elif isinstance(op, LostOp):
        if op.path is None:
            state.lose_tree("", op.reason)
        else:
            state.lose(state.resolve(op.path, cwd), op.reason)


def _edit(
    state: FileState, target: Resolved, op: EditOp, side: Mapping[str, Any], done: bool
) -> None:
    if not done or side.get("userModified"):
        state.lose(target, "edit whose outcome is unknown")
        return
    original = side.get("originalFile")
    if isinstance(original, str) and not target.flagged:
        # What the file held just before the edit: an observation first, so that a seeded
        # start (a clone's tree) learns the user's own version of the file from it.
        state.observe(target, original, "the edit's original file")
    base = original if isinstance(original, str) else state.text_of(target)
    if base is None:
        if all(e.old == "" for e in op.edits) and target.key not in state.files:
            base = ""  # an empty old string creates a file that did not exist
        else:
            state.lose(target, "edit on content the replay does not know")
            return
    new = _apply_edits(base, op.edits)
    if new is None and "structuredPatch" in side:
        try:
            new = apply_hunks(base, hunks_from_structured_patch(side["structuredPatch"]))
        except PatchError:
            new = None
    if new is None:
        state.lose(target, "edit did not match the known content")
        return
    state.write(target, new, "edited")


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


def _read(state: FileState, target: Resolved, op: ReadOp, result: Result) -> None:
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
        state.observe(target, text, "read in full")
    else:
        state.observe(target, None, "read in part")


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
