"""What the replay stepper shows of one step: its tool calls with arguments and results, the file
tree, the diffs against the previous step and one opened file.

Everything shown comes from the trajectory and is untrusted. Templates escape it; the only markup
marked safe is Pygments output (through `display.highlighted`), which escapes its input.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pygments.lexer import Lexer

from . import replay_reads as reads
from .core.replay import Entry, FileDiff, Status, is_tree, tree_dir
from .core.replay.results import readable_text
from .display import (
    BASH,
    DIFF,
    FILE_CHARS,
    FILE_HTML,
    JSON,
    LIST_ITEMS,
    MAX_DIFF_FILES,
    TEXT,
    Capped,
    DiffView,
    Fields,
    bytes_diff,
    collapsed,
    decoded,
    lexer_for,
    shown_value,
    sliced,
    tree_nodes,
)
from .models import Command, Step, Trajectory

INLINE_ARG_CHARS = 160

SHELL_KEYS = {"command", "cmd", "script"}
PATCH_KEYS = {"patch", "input", "diff"}
PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "filename")
# Arguments that carry file content, highlighted by the file's name.
CONTENT_KEYS = set(
    "content old_string new_string file_text old_str new_str new_source insert_text text".split()
)


# -- the conversation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    key: str
    text: str = ""  # short values, redacted here and escaped by the template
    shown: Capped | None = None  # long values, highlighted and capped
    redacted: int = 0  # secrets replaced in `text`


@dataclass(frozen=True)
class Output:
    shown: Capped
    error: bool
    lines: int


@dataclass(frozen=True)
class CheckView:
    """A check that matches no tool call of the step: shown on its own, with its output."""

    command: Command
    command_shown: Capped
    output_shown: Capped


@dataclass
class Call:
    id: str
    name: str
    args: list[Arg]
    outputs: list[Output] = field(default_factory=list)
    command: Command | None = None
    number: int = 0  # its place among the step's tool calls, from 1


@dataclass(frozen=True)
class Conversation:
    """One step as a page shows it: every field capped under the page's budget (`fields`, which
    also answers "show more"), LIST_ITEMS tool calls at most and how many more there were (a
    "show more" of calls answers the next ones from `calls_end`, as `call_window`)."""

    message: Capped
    reasoning: Capped
    calls: list[Call]
    loose: list[Output]
    checks: list[CheckView]
    more_calls: int
    fields: Fields
    calls_end: int = 0


@dataclass(frozen=True)
class CallWindow:
    """The step's tool calls `start` to `end` of `total`, for a "show more" of calls; their
    fields under a page budget of their own."""

    calls: list[Call]
    start: int
    end: int
    total: int
    fields: Fields

    @property
    def rest(self) -> int:
        return self.total - self.end


def _shell_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        # Codex's shell tool takes argv; ["bash", "-lc", script] is really the script.
        if len(value) >= 3 and value[1] in ("-c", "-lc"):
            return value[-1]
        return " ".join(value)
    return None


def _pretty(value: Any) -> str:
    return json.dumps(collapsed(value), indent=2, ensure_ascii=False)


def args_of(arguments: Any, fields: Fields | None = None, key: str = "args") -> list[Arg]:
    """A tool call's arguments, each highlighted by what it is: shell, patch, file content; long
    ones capped as fields of the page (`key`.n), nested JSON collapsed past JSON_DEPTH."""
    fields = fields if fields is not None else Fields()

    def shown(name: str, text: str, lexer: Lexer) -> Arg:
        return Arg(name, shown=fields.add(f"{key}.{len(out)}", text, lexer))

    def inline(name: str, text: str) -> Arg:
        safe = shown_value(name, text)
        return Arg(name, text=safe.value, redacted=safe.total)

    out: list[Arg] = []
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return [shown("arguments", arguments, TEXT)]
    if not isinstance(arguments, dict):
        return [shown("arguments", _pretty(arguments), JSON)]
    path = next((v for k in PATH_KEYS if isinstance(v := arguments.get(k), str)), "")
    for name, value in list(arguments.items())[:LIST_ITEMS]:
        shell = _shell_text(value) if name in SHELL_KEYS else None
        if shell is not None:
            out.append(shown(name, shell, BASH))
        elif isinstance(value, str) and name in PATCH_KEYS and "\n" in value:
            out.append(shown(name, value, DIFF))
        elif isinstance(value, str) and name in CONTENT_KEYS and path:
            out.append(shown(name, value, lexer_for(path)))
        elif isinstance(value, str) and "\n" not in value and len(value) <= INLINE_ARG_CHARS:
            out.append(inline(name, value))
        elif isinstance(value, str):
            out.append(shown(name, value, TEXT))
        else:
            dumped = json.dumps(collapsed(value), ensure_ascii=False)
            if len(dumped) <= INLINE_ARG_CHARS:
                out.append(inline(name, dumped))
            else:
                out.append(shown(name, _pretty(value), JSON))
    if len(arguments) > LIST_ITEMS:
        out.append(Arg("…", text=f"{len(arguments) - LIST_ITEMS} more arguments"))
    return out


def _content_text(content: Any) -> str:
    """readable_text of a result, with nested JSON collapsed first."""
    if content is None or isinstance(content, (str, list)):
        return readable_text(collapsed(content))
    return _pretty(content)


def _output(result: dict[str, Any], fields: Fields, key: str) -> Output:
    text = _content_text(result.get("content"))
    extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    error = bool(extra.get("is_error") or extra.get("isError"))
    return Output(shown=fields.add(key, text, TEXT), error=error, lines=text.count("\n") + 1)


def _tool_calls(step: Step) -> list[dict[str, Any]]:
    return [c for c in step.tool_calls or [] if isinstance(c, dict)]


def _results_by_call(step: Step) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {}
    for result in step.observations or []:
        if isinstance(result, dict):
            results.setdefault(str(result.get("source_call_id") or ""), []).append(result)
    return results


def _call(
    n: int,
    tool_call: dict[str, Any],
    found: list[dict[str, Any]],
    command: Command | None,
    fields: Fields,
    key: str,
) -> Call:
    """Tool call `n` of a step, its fields keyed by `n` so any "show more" finds them."""
    return Call(
        id=str(tool_call.get("tool_call_id") or ""),
        name=str(tool_call.get("function_name") or "tool"),
        args=args_of(tool_call.get("arguments"), fields, f"{key}call.{n}.args"),
        outputs=[_output(r, fields, f"{key}call.{n}.out.{i}") for i, r in enumerate(found)],
        command=command,
        number=n + 1,
    )


def conversation(
    step: Step, commands: list[Command], fields: Fields | None = None, key: str = ""
) -> Conversation:
    """The step's message, tool calls with their results and commands, results and checks that
    match no call. Fields are keyed under `key` so one page's `fields` can hold many steps."""
    fields = fields if fields is not None else Fields()
    message = fields.add(f"{key}message", step.message or "", None)
    reasoning = fields.add(f"{key}reasoning", step.reasoning or "", None)
    loose: list[Output] = []
    for n, result in enumerate(step.observations or []):
        if not isinstance(result, dict):
            shown = fields.add(f"{key}loose.{n}", _content_text(result), TEXT)
            loose.append(Output(shown=shown, error=False, lines=1))
    results = _results_by_call(step)
    by_call = {c.tool_call_id: c for c in commands if c.tool_call_id}
    calls = []
    tool_calls = _tool_calls(step)
    for n, tool_call in enumerate(tool_calls):
        call_id = str(tool_call.get("tool_call_id") or "")
        found = results.pop(call_id, []) if call_id else []
        command = by_call.pop(call_id, None) if call_id else None
        if n >= LIST_ITEMS:
            continue  # a "show more" of calls lists it; its results are not loose either
        calls.append(_call(n, tool_call, found, command, fields, key))
    others = [r for found in results.values() for r in found][:LIST_ITEMS]
    loose.extend(_output(r, fields, f"{key}result.{i}") for i, r in enumerate(others))
    unmatched = [c for c in by_call.values() if c.is_check]
    unmatched += [c for c in commands if c.is_check and not c.tool_call_id]
    checks = [
        CheckView(
            c,
            fields.add(f"{key}check.{i}.command", c.command, BASH),
            fields.add(f"{key}check.{i}.output", c.output, TEXT),
        )
        for i, c in enumerate(unmatched[:LIST_ITEMS])
    ]
    more_calls = max(0, len(tool_calls) - LIST_ITEMS)
    return Conversation(
        message, reasoning, calls, loose, checks, more_calls, fields, calls_end=len(calls)
    )


def call_window(step: Step, commands: list[Command], *, start: int) -> CallWindow:
    """LIST_ITEMS of the step's tool calls from `start`, with their results and commands: the
    "show more" of a step's calls, and where a "show more" of one of their fields looks."""
    fields = Fields()
    results = _results_by_call(step)
    by_call = {c.tool_call_id: c for c in commands if c.tool_call_id}
    tool_calls = _tool_calls(step)
    window = sliced(range(len(tool_calls)), start=start, count=LIST_ITEMS)
    calls = []
    for n in window.items:
        tool_call = tool_calls[n]
        call_id = str(tool_call.get("tool_call_id") or "")
        # The same id twice (a malformed log) shows its results at the first, as on the page.
        first = next(
            i for i, c in enumerate(tool_calls) if str(c.get("tool_call_id") or "") == call_id
        )
        found = results.get(call_id, []) if call_id and first == n else []
        command = by_call.get(call_id) if call_id and first == n else None
        calls.append(_call(n, tool_call, found, command, fields, ""))
    return CallWindow(calls, window.start, window.end, window.total, fields)


def calls_window_of(field_key: str) -> int | None:
    """Where the call window holding field `field_key` starts; None for the page's own."""
    match = re.match(r"call\.(\d+)\.", field_key)
    if match is None or int(match.group(1)) < LIST_ITEMS:
        return None
    n = int(match.group(1))
    return n - n % LIST_ITEMS


# -- the files -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepTreeRow:
    """A row of the file tree at a step."""

    name: str
    path: str
    depth: int
    kind: str  # dir | file | marker
    status: str = ""  # known | lost | partial | deleted | uncertain (a marker, or presumed)
    change: str = (
        ""  # added | modified | deleted | lost | partial | recovered | uncertain | cleared
    )
    has_changes: bool = False  # a directory with a change somewhere below


def change_kind(diff: FileDiff) -> str:
    old, new = diff.old, diff.new
    if is_tree(diff.path):
        return "cleared" if new is None else "uncertain"
    if new is None:
        return "deleted"
    if new.status is not Status.KNOWN:
        return str(new.status)  # lost | partial | uncertain
    if old is None:
        return "added"
    return "modified" if old.status is Status.KNOWN else "recovered"


def tree_rows(files: reads.StepFiles) -> list[StepTreeRow]:
    """The files after the step, with deleted ones kept in place and every change marked."""
    changes = {d.path: change_kind(d) for d in files.changes}
    status: dict[str, str] = {}
    for path, entry in files.after.items():
        status[path] = "uncertain" if is_tree(path) else str(entry.status)
    for path, kind in changes.items():
        if kind == "deleted":
            status[path] = "deleted"
    changed_dirs = {
        "/".join(p.split("/")[:i])
        for p in changes
        if not is_tree(p)
        for i in range(1, p.count("/") + 1)
    }
    rows = []
    for node in tree_nodes(status):
        if node.is_dir:
            row = StepTreeRow(
                node.name, node.path, node.depth, "dir", has_changes=node.path in changed_dirs
            )
        elif is_tree(node.path):
            label = f"{tree_dir(node.path) or '.'}/**"
            row = StepTreeRow(
                label, node.path, node.depth, "marker", "uncertain", changes.get(node.path, "")
            )
        else:
            row = StepTreeRow(
                node.name,
                node.path,
                node.depth,
                "file",
                status[node.path],
                changes.get(node.path, ""),
            )
        rows.append(row)
    return rows


def _status_note(entry: Entry | None, when: str) -> str:
    if entry is None:
        return ""
    if entry.status is Status.LOST:
        return (
            f"Content {when}: unknown (lost). Something changed the file in a way the trajectory "
            "does not show."
        )
    if entry.status is Status.PARTIAL:
        return f"Content {when}: partial. Only part of the file was seen."
    if entry.status is Status.UNCERTAIN:
        return (
            f"Content {when}: the last known content, shown; a command since may have changed "
            "it in a way the trajectory does not show."
        )
    return ""


def diff_view(diff: FileDiff, blobs: dict[str, bytes]) -> DiffView:
    kind = change_kind(diff)
    if kind == "uncertain" and is_tree(diff.path):
        where = tree_dir(diff.path) or "the project root"
        return DiffView(diff.path, kind, f"Everything under {where} may have changed (uncertain).")
    if kind == "cleared":
        return DiffView(
            diff.path,
            kind,
            f"{tree_dir(diff.path) or 'The root'} was removed, and with it the uncertainty.",
        )
    if kind in ("lost", "partial", "uncertain"):
        return DiffView(diff.path, kind, _status_note(diff.new, "after this step"))
    old_sha, new_sha = reads.known_sha(diff.old), reads.known_sha(diff.new)
    if kind == "deleted" and old_sha is None:
        return DiffView(diff.path, kind, "Deleted. " + _status_note(diff.old, "before this step"))
    note = ""
    if kind == "recovered":  # lost or partial before: there is nothing to diff against
        note = _status_note(diff.old, "before this step") + " Shown in full."
    old = blobs.get(old_sha) if old_sha else b""
    new = blobs.get(new_sha) if new_sha else b""
    return bytes_diff(diff.path, kind, old, new, note=note)


def diff_views(files: reads.StepFiles) -> tuple[list[DiffView], list[FileDiff]]:
    """Diffs of the first changed files (blobs for exactly those), and the changes not diffed."""
    shown, rest = files.changes[:MAX_DIFF_FILES], files.changes[MAX_DIFF_FILES:]
    blobs = reads.blob_contents(
        sha
        for d in shown
        if not is_tree(d.path)
        for sha in (reads.known_sha(d.old), reads.known_sha(d.new))
    )
    return [diff_view(d, blobs) for d in shown], rest


@dataclass(frozen=True)
class FileView:
    path: str
    status: str  # known | lost | partial | deleted | uncertain
    change: str
    note: str = ""
    shown: Capped | None = None  # numbered lines, FILE_CHARS at most
    size: int | None = None
    lines: int = 0


def file_view_of(
    files: reads.StepFiles, path: str, fields: Fields | None = None
) -> FileView | None:
    """One file as it was after the step; its content is the field "file" of `fields`."""
    entry, diff = files.after.get(path), files.changed(path)
    change = change_kind(diff) if diff else ""
    if entry is None:
        if diff is None:
            return None
        return FileView(path, "deleted", change, "Deleted at this step.")
    if is_tree(path):
        where = tree_dir(path) or "the project root"
        return FileView(
            path, "uncertain", change, f"Everything under {where} may have changed (uncertain)."
        )
    status, note = str(entry.status), _status_note(entry, "at this step")
    if not entry.presumed:
        return FileView(path, status, change, note)
    data = reads.blob_contents([entry.sha]).get(entry.sha or "")
    if data is None:
        return FileView(path, status, change, "The stored content is missing from the blob store.")
    text = decoded(data)
    if text is None:
        return FileView(
            path, status, change, f"{note} Binary file, {len(data)} bytes.".strip(), size=len(data)
        )
    return FileView(
        path,
        status,
        change,
        note,
        shown=(fields or Fields(FILE_HTML)).add(
            "file", text, lexer_for(path), chars=FILE_CHARS, numbered=True
        ),
        size=len(data),
        lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1),
    )


def replay_notice(trajectory: Trajectory) -> str:
    if trajectory.status == Trajectory.Status.REPLAY_FAILED:
        return f"Replay failed: {trajectory.replay_error or 'no reason recorded'}"
    if trajectory.status == Trajectory.Status.REPLAYING:
        return "Replay pending: a worker is replaying this trajectory now; files appear when done."
    return "Replay pending: this trajectory has not been replayed yet, so its files are not shown."
