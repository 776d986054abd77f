"""What the replay stepper shows of one step: its tool calls with arguments and results, the file
tree, the diffs against the previous step and one opened file.

Everything shown comes from the trajectory and is untrusted. Templates escape it; the only markup
marked safe is Pygments output (through `display.highlighted`), which escapes its input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.utils.safestring import SafeString

from . import replay_reads as reads
from .core.replay import Entry, FileDiff, Status, is_tree, tree_dir
from .core.replay.results import readable_text
from .display import (
    BASH,
    DIFF,
    JSON,
    MAX_DIFF_FILES,
    TEXT,
    DiffView,
    bytes_diff,
    decoded,
    highlighted,
    lexer_for,
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
    text: str = ""  # short values, escaped by the template
    html: SafeString | None = None  # long values, highlighted


@dataclass(frozen=True)
class Output:
    html: SafeString
    error: bool
    lines: int


@dataclass(frozen=True)
class CheckView:
    """A check that matches no tool call of the step: shown on its own, with its output."""

    command: Command
    command_html: SafeString
    output_html: SafeString


@dataclass
class Call:
    id: str
    name: str
    args: list[Arg]
    outputs: list[Output] = field(default_factory=list)
    command: Command | None = None


def _shell_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        # Codex's shell tool takes argv; ["bash", "-lc", script] is really the script.
        if len(value) >= 3 and value[1] in ("-c", "-lc"):
            return value[-1]
        return " ".join(value)
    return None


def args_of(arguments: Any) -> list[Arg]:
    """A tool call's arguments, each highlighted by what it is: shell, patch, file content."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return [Arg("arguments", html=highlighted(arguments, TEXT))]
    if not isinstance(arguments, dict):
        return [Arg("arguments", html=highlighted(json.dumps(arguments, indent=2), JSON))]
    path = next((v for k in PATH_KEYS if isinstance(v := arguments.get(k), str)), "")
    out = []
    for key, value in arguments.items():
        shell = _shell_text(value) if key in SHELL_KEYS else None
        if shell is not None:
            out.append(Arg(key, html=highlighted(shell, BASH)))
        elif isinstance(value, str) and key in PATCH_KEYS and "\n" in value:
            out.append(Arg(key, html=highlighted(value, DIFF)))
        elif isinstance(value, str) and key in CONTENT_KEYS and path:
            out.append(Arg(key, html=highlighted(value, lexer_for(path))))
        elif isinstance(value, str) and "\n" not in value and len(value) <= INLINE_ARG_CHARS:
            out.append(Arg(key, text=value))
        elif isinstance(value, str):
            out.append(Arg(key, html=highlighted(value, TEXT)))
        else:
            dumped = json.dumps(value, ensure_ascii=False)
            if len(dumped) <= INLINE_ARG_CHARS:
                out.append(Arg(key, text=dumped))
            else:
                pretty = json.dumps(value, indent=2, ensure_ascii=False)
                out.append(Arg(key, html=highlighted(pretty, JSON)))
    return out


def _output(result: dict[str, Any]) -> Output:
    text = readable_text(result.get("content"))
    extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    error = bool(extra.get("is_error") or extra.get("isError"))
    return Output(html=highlighted(text, TEXT), error=error, lines=text.count("\n") + 1)


def conversation(
    step: Step, commands: list[Command]
) -> tuple[list[Call], list[Output], list[CheckView]]:
    """Tool calls with their results and commands; results and checks that match no call."""
    results: dict[str, list[dict[str, Any]]] = {}
    loose: list[Output] = []
    for result in step.observations or []:
        if not isinstance(result, dict):
            loose.append(
                Output(html=highlighted(readable_text(result), TEXT), error=False, lines=1)
            )
            continue
        results.setdefault(str(result.get("source_call_id") or ""), []).append(result)
    by_call = {c.tool_call_id: c for c in commands if c.tool_call_id}
    calls = []
    for tool_call in step.tool_calls or []:
        if not isinstance(tool_call, dict):
            continue
        call_id = str(tool_call.get("tool_call_id") or "")
        calls.append(
            Call(
                id=call_id,
                name=str(tool_call.get("function_name") or "tool"),
                args=args_of(tool_call.get("arguments")),
                outputs=[_output(r) for r in results.pop(call_id, [])] if call_id else [],
                command=by_call.pop(call_id, None) if call_id else None,
            )
        )
    loose.extend(_output(r) for found in results.values() for r in found)
    unmatched = [c for c in by_call.values() if c.is_check]
    unmatched += [c for c in commands if c.is_check and not c.tool_call_id]
    checks = [
        CheckView(c, highlighted(c.command, BASH), highlighted(c.output, TEXT)) for c in unmatched
    ]
    return calls, loose, checks


# -- the files -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepTreeRow:
    """A row of the file tree at a step."""

    name: str
    path: str
    depth: int
    kind: str  # dir | file | marker
    status: str = ""  # known | lost | partial | deleted | uncertain
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
        return str(new.status)  # lost | partial
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
    return ""


def diff_view(diff: FileDiff, blobs: dict[str, bytes]) -> DiffView:
    kind = change_kind(diff)
    if kind == "uncertain":
        where = tree_dir(diff.path) or "the project root"
        return DiffView(diff.path, kind, f"Everything under {where} may have changed (uncertain).")
    if kind == "cleared":
        return DiffView(
            diff.path,
            kind,
            f"{tree_dir(diff.path) or 'The root'} was removed, and with it the uncertainty.",
        )
    if kind in ("lost", "partial"):
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
    html: SafeString | None = None
    size: int | None = None
    lines: int = 0


def file_view_of(files: reads.StepFiles, path: str) -> FileView | None:
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
    if entry.status is not Status.KNOWN:
        return FileView(path, str(entry.status), change, _status_note(entry, "at this step"))
    data = reads.blob_contents([entry.sha]).get(entry.sha or "")
    if data is None:
        return FileView(path, "known", change, "The stored content is missing from the blob store.")
    text = decoded(data)
    if text is None:
        return FileView(path, "known", change, f"Binary file, {len(data)} bytes.", size=len(data))
    return FileView(
        path,
        "known",
        change,
        html=highlighted(text, lexer_for(path), numbered=True),
        size=len(data),
        lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1),
    )


def replay_notice(trajectory: Trajectory) -> str:
    if trajectory.status == Trajectory.Status.REPLAY_FAILED:
        return f"Replay failed: {trajectory.replay_error or 'no reason recorded'}"
    if trajectory.status == Trajectory.Status.REPLAYING:
        return "Replay pending: a worker is replaying this trajectory now; files appear when done."
    return "Replay pending: this trajectory has not been replayed yet, so its files are not shown."
