"""The format layer of ingest: any supported log in, validated ATIF out.

Plain Python, no Django. ``load`` reads a file once, decides what it is by its
content (never its name), converts it to ATIF (ATIF files as written; Claude
Code and Codex through atif-make; pi through ``pi.py``), validates the result
with Harbor's ``Trajectory`` model and returns it with side data and a summary.
A file that is not a trajectory at all comes back as ``NotTrajectory``; a file
that should be one but is broken raises ``IngestError``. Nothing else is raised
except ``ValueError`` for an unknown ``fmt``. A JSON Lines log with bad lines (a
stack trace between events, a last line cut off) loads with every line that
decoded; ``Loaded.warnings`` names each line skipped or repaired, and such a
trajectory is ``partial``.

``survey`` lists the files under the paths given to ingest, and the paths it
will not open (FIFOs, devices, sockets, broken links) with the reason. A
``Folders`` index, shared by every ``load`` of a batch, lists each folder once
for what atif-make looks for beside a log (see ``folders.py``).

``Loaded.side_data`` holds what replay needs and ATIF does not, all JSON-safe.
Keys are present only for the formats named:

``tool_results`` (claude-code, pi)
    ``{tool_call_id: raw result}``: Claude Code's per-line ``toolUseResult``
    (``originalFile``, ``structuredPatch``, Read's ``file.content``, Bash
    stdout/stderr ...) and pi's toolResult ``details`` (an edit's diff, an
    exec's exitCode/cwd).
``cwd`` (claude-code, codex, pi)
    ``{tool_call_id: working directory when the call was made}``: Claude Code's
    per-line ``cwd``; Codex's ``workdir`` argument, the ``exec_command_end``
    cwd, else the turn's cwd; pi where the result's details name one.
``commands`` (codex)
    ``{call_id: {command, argv?, cwd, exit_code, output, polls, parent_call_id?}}``
    for every shell call: ``command`` is the shell text (the script of a
    ``["bash", "-lc", script]`` argv, which is kept as ``argv``); the exit code
    and full output come from ``exec_command_end``, else are assembled from the
    call's reply and its ``write_stdin`` polls (the exit status is often only in
    the last poll). ``parent_call_id`` marks a command run inside a code-mode
    ``exec`` call.
``polls`` (codex)
    ``{write_stdin call_id: the exec_command call_id it polled}``.
``patches`` (codex)
    ``{apply_patch call_id: {success, changes, stdout, stderr, parent_call_id?}}``
    from ``patch_apply_end``; ``changes`` maps absolute paths to
    ``{type: add|delete|update, unified_diff | content, move_path}``.
``nested_calls`` (codex)
    ``{code-mode exec call_id: [call ids of the commands and patches it ran]}``.
``subagents`` (claude-code, codex)
    ``[{trajectory_id, session_id, path, tool_call_id, steps}]``: subagents
    atif-make embedded and ingest removed (their files are ingested on their
    own); ``path`` is the subagent's file relative to this one's folder, and
    ``tool_call_id`` the call that spawned it, so replay can merge its edits.
``pi_tree`` (pi, tree layout)
    ``{leaf_id, on_branch, off_branch}``: the active branch that was kept.
``skipped_entries`` (pi)
    ``{entry type: count}`` of bookkeeping entries with no ATIF counterpart.
``media`` (any converted format with images)
    ``{"images/<digest>.<ext>": {media_type, base64}}``: the bytes behind
    image parts, which ATIF refers to by relative path.
``normalised`` (atif, claude-code, codex)
    Sentences describing each change made to turn the source into valid,
    complete ATIF (see ``atif.py`` and ``codex.py``), and a conversion that
    left out the sessions beside the log because one of them broke atif-make
    (see ``converter.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..memory import collector_paused
from .atif import ORIGIN as ATIF_ORIGIN
from .atif import convert_atif
from .claude_code import convert_claude_code
from .codex import convert_codex
from .detect import Kind, classify, detect
from .folders import Folders
from .meta import Hints, build_meta, validate
from .model import (
    FORMATS,
    HarborTrial,
    IngestError,
    LineWarning,
    Loaded,
    NotTrajectory,
    TrajectoryMeta,
    Unreadable,
)
from .pi import convert_pi
from .source import Source, describe, file_kind, read_bytes, read_source
from .trial import harbor_trial

__all__ = [
    "FORMATS",
    "Folders",
    "HarborTrial",
    "IngestError",
    "Inputs",
    "LineWarning",
    "Loaded",
    "NotTrajectory",
    "TrajectoryMeta",
    "Unreadable",
    "detect",
    "discover",
    "harbor_trial",
    "load",
    "read_bytes",
    "survey",
]

_NAMES = {
    "atif": "an ATIF trajectory",
    "claude-code": "a Claude Code log",
    "codex": "a Codex log",
    "pi": "a pi session",
}


def load(
    path: Path, fmt: str = "auto", *, data: bytes | None = None, folders: Folders | None = None
) -> Loaded | NotTrajectory:
    """Read one file as a trajectory in ``fmt`` (or whatever it holds, for "auto").

    ``data`` is the file's bytes when the caller has read them already (ingest
    hashes them first); ``folders`` is the batch's index of folders, when there is one.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected 'auto' or one of {', '.join(FORMATS)}")
    path = Path(path)
    with collector_paused():
        source = read_source(path, data)
        if isinstance(source, NotTrajectory):
            return source
        kind = classify(source.records)
        if kind is None:
            return NotTrajectory(describe(source))
        if fmt not in ("auto", kind.format):
            raise IngestError(
                path,
                f"expected {_NAMES[fmt]} but the file is {_NAMES[kind.format]}; "
                f"load it as {kind.format!r} or 'auto'",
            )
        return _load(source, kind, folders or Folders())


def _load(source: Source, kind: Kind, folders: Folders) -> Loaded:
    path = source.path
    document, side, hints = _convert(source, kind, folders)
    origin = (
        ATIF_ORIGIN if kind.format == "atif" else f"the ATIF converted from {_NAMES[kind.format]}"
    )
    model = validate(document, path, origin)
    meta = build_meta(model, hints, folders.harbor_trial(path))
    warnings = tuple(sorted((*source.warnings, *hints.warnings), key=lambda w: w.line))
    return Loaded(format=kind.format, atif=document, side_data=side, meta=meta, warnings=warnings)


def _convert(
    source: Source, kind: Kind, folders: Folders
) -> tuple[dict[str, Any], dict[str, Any], Hints]:
    if kind.format == "atif":
        return convert_atif(source)
    if kind.format == "claude-code":
        return convert_claude_code(source, kind.variant, folders)
    if kind.format == "codex":
        return convert_codex(source, kind.variant, folders)
    return convert_pi(source)


@dataclass(frozen=True)
class Inputs:
    files: list[Path]  # regular files (or links to them), sorted, each once
    skipped: list[Unreadable]  # what is there but cannot be read as a file, with the reason


def survey(paths: Iterable[Path]) -> Inputs:
    """Every file under the given files and folders, and every path that is not one.

    Folders are walked recursively without following symlinked folders (a link
    back up would loop); hidden files and folders (``.git``, ``.venv`` ...) are
    skipped silently unless named directly, and so are Harbor task folders (a
    ``task.toml``: tasks, such as ``samples/authored/``, not sessions). A FIFO, a device,
    a socket, a broken link, a linked folder or a folder that cannot be listed is never
    opened: it is reported in ``skipped`` with its reason. A path that does not exist
    raises ``FileNotFoundError``: a mistyped input is a setup error, not a bad file.
    """
    found: dict[str, Path] = {}
    skipped: dict[str, Unreadable] = {}

    def skip(path: Path, reason: str) -> None:
        skipped.setdefault(str(path.absolute()), Unreadable(path, reason))

    for given in paths:
        given = Path(given)
        try:
            mode = given.stat().st_mode
        except FileNotFoundError:
            if os.path.lexists(given):
                skip(given, "a broken symbolic link")
                continue
            raise FileNotFoundError(f"no such file or folder: {given}") from None
        except OSError as error:
            skip(given, f"cannot read it: {error.strerror or error}")
            continue
        kind = file_kind(mode)
        if kind is None:
            found.setdefault(str(given.absolute()), given)
        elif kind == "a folder":
            _walk(given, found, skip)
        else:
            skip(given, f"not a regular file: {kind}")
    return Inputs(
        files=[found[key] for key in sorted(found)],
        skipped=[skipped[key] for key in sorted(skipped)],
    )


def _walk(root: Path, found: dict[str, Path], skip: Callable[[Path, str], None]) -> None:
    waiting = [root]
    while waiting:
        folder = waiting.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as error:
            skip(folder, f"cannot list the folder: {error.strerror or error}")
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = folder / entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not (path / "task.toml").is_file():  # a Harbor task, not sessions
                        waiting.append(path)
                elif entry.is_file():
                    found.setdefault(str(path.absolute()), path)
                elif entry.is_symlink():
                    skip(path, _link_reason(path))
                else:
                    kind = file_kind(entry.stat(follow_symlinks=False).st_mode)
                    skip(path, f"not a regular file: {kind}")
            except OSError as error:
                skip(path, f"cannot read it: {error.strerror or error}")


def _link_reason(path: Path) -> str:
    try:
        kind = file_kind(path.stat().st_mode)
    except OSError:
        return "a broken symbolic link"
    if kind == "a folder":
        return "a symbolic link to a folder (not followed)"
    return f"not a regular file: a symbolic link to {kind}"


def discover(paths: Iterable[Path]) -> list[Path]:
    """The files ``survey`` finds (what it skips is left out)."""
    return survey(paths).files
