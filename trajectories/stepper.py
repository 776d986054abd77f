"""The replay stepper: one step of a trajectory at a time, with its files, diff and checks.

Everything shown comes from the trajectory and is untrusted. Templates escape it; the only markup
marked safe here is Pygments output, which escapes every character of its input.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.contrib.auth.decorators import permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import BashLexer, DiffLexer, JsonLexer, TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from . import replay_reads as reads
from .core.replay import Entry, FileDiff, Status, is_tree, tree_dir
from .models import Command, Step, Trajectory

can_review = permission_required("trajectories.review_trajectory", raise_exception=True)

WINDOW_RADIUS = 10  # steps listed either side of the current one
MAX_DIFF_FILES = 20  # more changed files than this are listed, not diffed
MAX_DIFF_BYTES = 512 * 1024
MAX_DIFF_LINES = 3000
MAX_HIGHLIGHT_CHARS = 200_000  # beyond this, plain (still escaped) text: lexing would be slow
INLINE_ARG_CHARS = 160

SHELL_KEYS = {"command", "cmd", "script"}
PATCH_KEYS = {"patch", "input", "diff"}
PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "filename")
# Arguments that carry file content, highlighted by the file's name.
CONTENT_KEYS = set(
    "content old_string new_string file_text old_str new_str new_source insert_text text".split()
)

_BLOCK = HtmlFormatter(cssclass="hl", wrapcode=True)
_NUMBERED = HtmlFormatter(cssclass="hl", wrapcode=True, linenos="inline")
_TEXT = TextLexer(stripnl=False)
_BASH = BashLexer(stripnl=False)
_DIFF = DiffLexer(stripnl=False)
_JSON = JsonLexer(stripnl=False)


def highlighted(text: str, lexer: Lexer, *, numbered: bool = False) -> SafeString:
    if len(text) > MAX_HIGHLIGHT_CHARS:
        lexer = _TEXT
    # Pygments escapes the text it is given, so its output is the one HTML we vouch for.
    return mark_safe(highlight(text, lexer, _NUMBERED if numbered else _BLOCK))


@lru_cache(maxsize=2048)
def lexer_for(path: str) -> Lexer:
    """Pygments' lexer for a file name (by name alone: guessing from content is slow and wrong
    on fragments); plain text when none claims it."""
    try:
        return get_lexer_for_filename(posixpath.basename(path) or path, stripnl=False)
    except ClassNotFound:
        return _TEXT


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


def _text(content: Any) -> str:
    """An observation's content: a string, or content parts (images become a marker)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text") or ""))
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type', 'part')}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return json.dumps(content, indent=2, ensure_ascii=False)


def _shell_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        # Codex's shell tool takes argv; ["bash", "-lc", script] is really the script.
        if len(value) >= 3 and value[1] in ("-c", "-lc"):
            return value[-1]
        return " ".join(value)
    return None


def _args(arguments: Any) -> list[Arg]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return [Arg("arguments", html=highlighted(arguments, _TEXT))]
    if not isinstance(arguments, dict):
        return [Arg("arguments", html=highlighted(json.dumps(arguments, indent=2), _JSON))]
    path = next((v for k in PATH_KEYS if isinstance(v := arguments.get(k), str)), "")
    out = []
    for key, value in arguments.items():
        shell = _shell_text(value) if key in SHELL_KEYS else None
        if shell is not None:
            out.append(Arg(key, html=highlighted(shell, _BASH)))
        elif isinstance(value, str) and key in PATCH_KEYS and "\n" in value:
            out.append(Arg(key, html=highlighted(value, _DIFF)))
        elif isinstance(value, str) and key in CONTENT_KEYS and path:
            out.append(Arg(key, html=highlighted(value, lexer_for(path))))
        elif isinstance(value, str) and "\n" not in value and len(value) <= INLINE_ARG_CHARS:
            out.append(Arg(key, text=value))
        elif isinstance(value, str):
            out.append(Arg(key, html=highlighted(value, _TEXT)))
        else:
            dumped = json.dumps(value, ensure_ascii=False)
            if len(dumped) <= INLINE_ARG_CHARS:
                out.append(Arg(key, text=dumped))
            else:
                pretty = json.dumps(value, indent=2, ensure_ascii=False)
                out.append(Arg(key, html=highlighted(pretty, _JSON)))
    return out


def _output(result: dict[str, Any]) -> Output:
    text = _text(result.get("content"))
    extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    error = bool(extra.get("is_error") or extra.get("isError"))
    return Output(html=highlighted(text, _TEXT), error=error, lines=text.count("\n") + 1)


def conversation(
    step: Step, commands: list[Command]
) -> tuple[list[Call], list[Output], list[CheckView]]:
    """Tool calls with their results and commands; results and checks that match no call."""
    results: dict[str, list[dict[str, Any]]] = {}
    loose: list[Output] = []
    for result in step.observations or []:
        if not isinstance(result, dict):
            loose.append(Output(html=highlighted(_text(result), _TEXT), error=False, lines=1))
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
                args=_args(tool_call.get("arguments")),
                outputs=[_output(r) for r in results.pop(call_id, [])] if call_id else [],
                command=by_call.pop(call_id, None) if call_id else None,
            )
        )
    loose.extend(_output(r) for found in results.values() for r in found)
    unmatched = [c for c in by_call.values() if c.is_check]
    unmatched += [c for c in commands if c.is_check and not c.tool_call_id]
    checks = [
        CheckView(c, highlighted(c.command, _BASH), highlighted(c.output, _TEXT)) for c in unmatched
    ]
    return calls, loose, checks


# -- the files -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeRow:
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


_DIGITS = re.compile(r"(\d+)")


def _natural(name: str) -> tuple[str | int, ...]:
    """mod_2 before mod_10, as a person sorts file names."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in _DIGITS.split(name))


def _sort_key(path: str) -> tuple[tuple[int, tuple[str | int, ...], str], ...]:
    """Directories before files at every level; a tree marker first inside its directory. The
    name itself breaks ties ("A" and "a"), so each directory's entries stay together."""
    *dirs, name = path.split("/")
    rank = -1 if name == "**" else 1
    return (*((0, _natural(d), d) for d in dirs), (rank, _natural(name), name))


def tree_rows(files: reads.StepFiles) -> list[TreeRow]:
    changes = {d.path: change_kind(d) for d in files.changes}
    paths: dict[str, str] = {}
    for path, entry in files.after.items():
        paths[path] = "uncertain" if is_tree(path) else str(entry.status)
    for path, kind in changes.items():
        if kind == "deleted":
            paths[path] = "deleted"
    changed_dirs = {
        "/".join(p.split("/")[:i])
        for p in changes
        if not is_tree(p)
        for i in range(1, p.count("/") + 1)
    }
    rows: list[TreeRow] = []
    open_dirs: list[str] = []
    for path in sorted(paths, key=_sort_key):
        *dirs, name = path.split("/")
        depth = 0
        while depth < len(open_dirs) and depth < len(dirs) and open_dirs[depth] == dirs[depth]:
            depth += 1
        del open_dirs[depth:]
        for d in dirs[depth:]:
            prefix = "/".join([*open_dirs, d])
            rows.append(
                TreeRow(d, prefix, len(open_dirs), "dir", has_changes=prefix in changed_dirs)
            )
            open_dirs.append(d)
        if is_tree(path):
            label = f"{tree_dir(path) or '.'}/**"
            rows.append(
                TreeRow(label, path, len(dirs), "marker", "uncertain", changes.get(path, ""))
            )
        else:
            rows.append(TreeRow(name, path, len(dirs), "file", paths[path], changes.get(path, "")))
    return rows


@dataclass(frozen=True)
class DiffView:
    path: str
    change: str
    note: str = ""
    html: SafeString | None = None
    added: int = 0
    removed: int = 0

    @property
    def label(self) -> str:
        """The path as the tree shows it ("./**" for the root's marker)."""
        return f"{tree_dir(self.path) or '.'}/**" if is_tree(self.path) else self.path


def _decoded(data: bytes | None) -> str | None:
    """Text, or None for binary content (a NUL byte or not UTF-8)."""
    if data is None or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _unified(path: str, old: str, new: str, *, added: bool, deleted: bool) -> DiffView | None:
    """difflib's unified diff, highlighted; None when the texts are equal."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile="/dev/null" if added else f"a/{path}",
            tofile="/dev/null" if deleted else f"b/{path}",
        )
    )
    if not lines:
        return None
    lines = lines[2:]  # the ---/+++ header: the path and its change are shown above the diff
    shown = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in lines[:MAX_DIFF_LINES]
    )
    if len(lines) > MAX_DIFF_LINES:
        shown += f"… {len(lines) - MAX_DIFF_LINES} more diff lines not shown\n"
    return DiffView(
        path,
        "",
        html=highlighted(shown, _DIFF),
        added=sum(1 for x in lines if x.startswith("+")),
        removed=sum(1 for x in lines if x.startswith("-")),
    )


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
    old_bytes = blobs.get(old_sha) if old_sha else b""
    new_bytes = blobs.get(new_sha) if new_sha else b""
    if old_bytes is None or new_bytes is None:
        return DiffView(diff.path, kind, "The stored content is missing from the blob store.")
    if max(len(old_bytes), len(new_bytes)) > MAX_DIFF_BYTES:
        return DiffView(
            diff.path, kind, f"Too large to diff ({len(old_bytes)} → {len(new_bytes)} bytes)."
        )
    old_text, new_text = _decoded(old_bytes), _decoded(new_bytes)
    if old_text is None or new_text is None:
        return DiffView(
            diff.path, kind, f"Binary file ({len(old_bytes)} → {len(new_bytes)} bytes)."
        )
    note = ""
    if kind == "recovered":  # lost or partial before: there is nothing to diff against
        note = _status_note(diff.old, "before this step") + " Shown in full."
    unified = _unified(
        diff.path,
        old_text,
        new_text,
        added=kind in ("added", "recovered"),
        deleted=kind == "deleted",
    )
    if unified is None:
        return DiffView(diff.path, kind, "Same content.")
    return DiffView(diff.path, kind, note, unified.html, unified.added, unified.removed)


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
    text = _decoded(data)
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


# -- the views -------------------------------------------------------------------------------------


def replay_notice(trajectory: Trajectory) -> str:
    if trajectory.status == Trajectory.Status.REPLAY_FAILED:
        return f"Replay failed: {trajectory.replay_error or 'no reason recorded'}"
    if trajectory.status == Trajectory.Status.REPLAYING:
        return "Replay pending: a worker is replaying this trajectory now; files appear when done."
    return "Replay pending: this trajectory has not been replayed yet, so its files are not shown."


def _trajectory(pk: int) -> Trajectory:
    trajectory = reads.trajectory_for_stepper(trajectory_id=pk)
    if trajectory is None:
        raise Http404("No such trajectory.")
    return trajectory


def _step_files(trajectory: Trajectory, step: Step | None) -> tuple[reads.StepFiles | None, str]:
    replay = reads.replay_of(trajectory)
    if step is None or replay is None or trajectory.status != Trajectory.Status.REPLAYED:
        return None, replay_notice(trajectory)
    try:
        files = reads.step_files(replay=replay, step=step)
    except reads.ReplayIncomplete:
        return None, "Replay incomplete: its stored states are being rewritten. Reload in a moment."
    return files, "" if files else replay_notice(trajectory)


def _step_context(trajectory: Trajectory, index: int, *, path: str | None = None) -> dict[str, Any]:
    pk, count = trajectory.pk, trajectory.steps_count
    step = reads.step_get(trajectory_id=pk, index=index)
    if step is None and count:
        raise Http404("This step is missing from the stored trajectory.")
    files, notice = _step_files(trajectory, step)
    commands = reads.step_commands(trajectory_id=pk, index=index) if step else []
    calls, loose, unmatched_checks = conversation(step, commands) if step else ([], [], [])
    previous_check, next_check = reads.check_neighbours(trajectory_id=pk, index=index)
    window = reads.step_window(trajectory_id=pk, index=index, count=count, radius=WINDOW_RADIUS)
    outcomes = (
        reads.checks_in(trajectory_id=pk, low=window[0].index, high=window[-1].index)
        if window
        else {}
    )
    diffs, undiffed = diff_views(files) if files else ([], [])
    opened = file_view_of(files, path) if files and path is not None else None
    if path is not None and opened is None:
        raise Http404("No such file at this step.")
    return {
        "trajectory": trajectory,
        "step": step,
        "index": index,
        "number": index + 1,
        "count": count,
        "progress": round(100 * (index + 1) / count, 2) if count else 0,
        "previous": index - 1 if index > 0 else None,
        "next": index + 1 if index + 1 < count else None,
        "previous_check": previous_check,
        "next_check": next_check,
        "window": [(s, outcomes.get(s.index, "none")) for s in window],
        "calls": calls,
        "loose_outputs": loose,
        "unmatched_checks": unmatched_checks,
        "checks": [c for c in commands if c.is_check],
        "files": files,
        "notice": notice,
        "tree": tree_rows(files) if files else [],
        "diffs": diffs,
        "undiffed": undiffed,
        "opened": opened,
    }


def _render(
    request: HttpRequest, template: str, context: dict[str, Any], partial: str
) -> HttpResponse:
    # A history-restore request after a cache miss wants the whole page, not the fragment.
    if request.htmx and not request.htmx.history_restore_request:
        template += f"#{partial}"
        context["fragment"] = True
    response = render(request, template, context)
    patch_vary_headers(response, ["HX-Request"])  # never serve a cached fragment as the page
    return response


def _go_to(trajectory: Trajectory, raw: str, index: int) -> int:
    """The index for a 1-based step number typed into "go to step", clamped to the steps."""
    try:
        wanted = int(raw.strip().lstrip("#")) - 1
    except ValueError:
        return index
    return max(0, min(wanted, trajectory.steps_count - 1))


@can_review
def step_view(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    trajectory = _trajectory(pk)
    last = max(trajectory.steps_count - 1, 0)
    if "go" in request.GET:
        return redirect("trajectories:step", pk, _go_to(trajectory, request.GET["go"], index))
    if index > last:
        return redirect("trajectories:step", pk, last)
    context = _step_context(trajectory, index)
    return _render(request, "trajectories/stepper.html", context, "step")


@can_review
def file_view(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    path = request.GET.get("path", "")
    trajectory = _trajectory(pk)
    last = max(trajectory.steps_count - 1, 0)
    if index > last:
        url = reverse("trajectories:step_file", args=[pk, last])
        return redirect(f"{url}?{request.GET.urlencode(safe='/')}")
    if not (request.htmx and not request.htmx.history_restore_request):
        context = _step_context(trajectory, index, path=path)
        return _render(request, "trajectories/stepper.html", context, "step")
    step = reads.step_get(trajectory_id=pk, index=index)
    files, _notice = _step_files(trajectory, step)
    opened = file_view_of(files, path) if files else None
    if opened is None:
        raise Http404("No such file at this step.")
    context = {"trajectory": trajectory, "index": index, "number": index + 1, "opened": opened}
    return _render(request, "trajectories/partials/step_file.html", context, "file")
