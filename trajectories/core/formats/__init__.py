"""The format layer of ingest: any supported log in, validated ATIF out.

Plain Python, no Django. ``load`` reads a file once, decides what it is by its
content (never its name), converts it to ATIF (ATIF files as written; Claude
Code and Codex through atif-make; pi through ``pi.py``), validates the result
with Harbor's ``Trajectory`` model and returns it with side data and a summary.
A file that is not a trajectory at all comes back as ``NotTrajectory``; a file
that should be one but is broken raises ``IngestError``. Nothing else is raised
except ``ValueError`` for an unknown ``fmt``.

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
``normalised`` (atif, codex)
    Sentences describing each change made to turn the source into valid,
    complete ATIF (see ``atif.py`` and ``codex.py``).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .atif import ORIGIN as ATIF_ORIGIN
from .atif import convert_atif
from .claude_code import convert_claude_code
from .codex import convert_codex
from .detect import Kind, classify, detect
from .meta import Hints, build_meta, validate
from .model import (
    FORMATS,
    HarborTrial,
    IngestError,
    Loaded,
    NotTrajectory,
    TrajectoryMeta,
)
from .pi import convert_pi
from .source import Source, describe, read_source
from .trial import harbor_trial

__all__ = [
    "FORMATS",
    "HarborTrial",
    "IngestError",
    "Loaded",
    "NotTrajectory",
    "TrajectoryMeta",
    "detect",
    "discover",
    "harbor_trial",
    "load",
]

_NAMES = {
    "atif": "an ATIF trajectory",
    "claude-code": "a Claude Code log",
    "codex": "a Codex log",
    "pi": "a pi session",
}


def load(path: Path, fmt: str = "auto") -> Loaded | NotTrajectory:
    """Read one file as a trajectory in ``fmt`` (or whatever it holds, for "auto")."""
    if fmt != "auto" and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected 'auto' or one of {', '.join(FORMATS)}")
    path = Path(path)
    with _collector_paused():
        source = read_source(path)
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
        return _load(source, kind)


def _load(source: Source, kind: Kind) -> Loaded:
    path = source.path
    document, side, hints = _convert(source, kind)
    origin = (
        ATIF_ORIGIN if kind.format == "atif" else f"the ATIF converted from {_NAMES[kind.format]}"
    )
    model = validate(document, path, origin)
    meta = build_meta(model, hints, harbor_trial(path))
    return Loaded(format=kind.format, atif=document, side_data=side, meta=meta)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a log is turned into objects.

    A long session becomes millions of dicts and lists; each allocation burst
    triggers collections that walk the whole growing heap, which made a
    32,000-step session cost 2.4 times as much per step as a 2,000-step one.
    JSON trees hold no reference cycles, so pausing loses nothing; reference
    counting still frees everything. Only a caller's enabled collector is
    resumed, so nesting and concurrent loads leave it as they found it.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _convert(source: Source, kind: Kind) -> tuple[dict[str, Any], dict[str, Any], Hints]:
    if kind.format == "atif":
        return convert_atif(source)
    if kind.format == "claude-code":
        return convert_claude_code(source, kind.variant)
    if kind.format == "codex":
        return convert_codex(source, kind.variant)
    return convert_pi(source)


def discover(paths: Iterable[Path]) -> list[Path]:
    """Every file under the given files and folders, sorted, each once.

    Folders are walked recursively without following symlinked folders (a link
    back up would loop); hidden files and folders (``.git``, ``.venv`` ...) are
    skipped unless named directly, and so are Harbor task folders (a ``task.toml``:
    tasks, such as ``samples/sandbox/``, not sessions). A path that does not exist
    raises ``FileNotFoundError``: a mistyped input is a setup error, not a bad file.
    """
    found: dict[str, Path] = {}
    for given in paths:
        given = Path(given)
        if given.is_file():
            found.setdefault(str(given.absolute()), given)
        elif given.is_dir():
            for folder, dirs, files in os.walk(given):
                dirs[:] = [
                    d
                    for d in dirs
                    if not d.startswith(".") and not (Path(folder) / d / "task.toml").is_file()
                ]
                for name in files:
                    candidate = Path(folder) / name
                    if not name.startswith(".") and candidate.is_file():
                        found.setdefault(str(candidate.absolute()), candidate)
        else:
            raise FileNotFoundError(f"no such file or folder: {given}")
    return [found[key] for key in sorted(found)]
