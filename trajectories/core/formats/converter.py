"""Running atif-make, and what ingest does to its output before keeping it.

atif-make reads the file itself, line by line, and silently skips a line that
does not decode on its own; it also looks beside the file for the sessions the
log spawned. Two things follow.

* When a line-based reader would misread the bytes on disk (two objects on one
  line, a byte-order mark, lines ingest skipped or repaired), atif-make is
  given a clean copy written from the records already read, so it converts
  exactly what ingest read and warned about.
* When looking beside the file would cost more than the file (a folder of
  thousands of sessions, see ``folders.py``), atif-make does not look: a Claude
  Code transcript past the teammate cap is parsed with teammate linking off
  (atif-make links none past the cap anyway), and a Codex rollout is shown a
  *view* of its folder: a private folder holding the log, links to the
  session's own folder (subagents, persisted tool results), and links to just
  the neighbours it would have linked. Either way its result is the same.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

from atif_make import convert
from atif_make.atif import SCHEMA_VERSION, MediaStore, Trajectory
from atif_make.parsers.claude_code import parse_claude_code_transcript

from groundwork.core.failures import said

from .model import IngestError
from .source import Source


@dataclass(frozen=True)
class Beside:
    """What atif-make may see beside the log it converts.

    ``direct``: it may read the real folder (its own look there is cheap enough).
    ``neighbours``: the names in the folder it links from this log, for a view.
    ``teammates``: a Claude Code transcript is searched for teammates at all.
    """

    direct: bool
    neighbours: Sequence[str] = ()
    teammates: bool = True


ALONE = Beside(direct=True)
# Nothing beside the log but its own folder (subagents, persisted results).
SOLITARY = Beside(direct=False, teammates=False)


def run_atif_make(
    source: Source, variant: str, label: str, beside: Beside = ALONE
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Convert with atif-make: the ATIF document as a plain dict, its images, and notes.

    atif-make reads the sessions beside a log to link them, and a damaged one can
    make it raise (its teammate search reads each neighbour's first lines and
    expects every one to be an object). A neighbour must not cost this log: when
    a conversion that looked beside it fails, the log is converted alone, and a
    note (for ``side_data["normalised"]``) says so. If that fails too, the log
    itself is at fault and its own error is raised.
    """
    try:
        return (*_run(source, variant, label, beside), [])
    except IngestError as error:
        if not _looks_beside(variant, beside):
            raise
        document, media = _run(source, variant, label, SOLITARY)
        note = (
            "converted without linking the sessions beside it: with them, "
            f"{error.reason[0].lower()}{error.reason[1:]}"
        )
        return document, media, [note]


def _looks_beside(variant: str, beside: Beside) -> bool:
    if variant == "claude-code-transcript":
        return beside.teammates
    if variant == "codex-rollout":
        return beside.direct or bool(beside.neighbours)
    return False


def _run(
    source: Source, variant: str, label: str, beside: Beside
) -> tuple[dict[str, Any], dict[str, Any]]:
    path = source.path
    if beside.direct and not source.needs_clean_copy:
        return _convert(path, path, variant, label, beside.teammates)
    try:
        with tempfile.TemporaryDirectory(prefix="traj2env-") as tmp:
            where = Path(tmp) / "view" / (path.parent.name or "log")
            where.mkdir(parents=True)
            read = where / path.name
            if source.needs_clean_copy:
                _write_clean_copy(read, source)
            else:
                read.symlink_to(path.absolute())
            # A session keeps subagents and oversized results in `<stem>/`; a
            # subagent finds the session's `tool-results/` two levels up.
            _link(where / path.stem, path.parent / path.stem)
            _link(where.parent / "tool-results", path.parent.parent / "tool-results")
            for name in beside.neighbours:
                if not os.path.lexists(where / name):
                    (where / name).symlink_to((path.parent / name).absolute())
            return _convert(read, path, variant, label, beside.teammates)
    except OSError as error:
        reason = f"could not write the copy atif-make reads: {error.strerror or error}"
        raise IngestError(path, reason) from None


def _write_clean_copy(copy: Path, source: Source) -> None:
    with copy.open("w", encoding="utf-8") as handle:
        for record in source.records:
            handle.write(json.dumps(record.value))
            handle.write("\n")


def _link(link: Path, target: Path) -> None:
    if target.is_dir() and not link.exists():
        link.symlink_to(target.resolve(), target_is_directory=True)


def _convert(
    read: Path, original: Path, variant: str, label: str, teammates: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    # atif-make is a library of hand-written parsers over untrusted logs: a
    # number where it expects text surfaces as TypeError, a bad shape as
    # KeyError. Any of them means this file cannot be converted.
    try:
        if variant == "claude-code-transcript" and not teammates:
            # `_team` is the switch atif-make uses for the same purpose inside its
            # parser; a test holds the result equal to `convert` past the cap.
            trajectory = parse_claude_code_transcript(read, _team=False)
        else:
            trajectory, _ = convert(read, variant)
        document = to_dict(trajectory)
        media = media_data(trajectory.all_media())
    except RecursionError:
        raise IngestError(
            original, f"atif-make could not convert this {label}: nested too deeply"
        ) from None
    except OSError as error:
        raise IngestError(original, f"cannot read the file: {error.strerror or error}") from None
    except ValueError as error:
        raise IngestError(original, f"atif-make could not convert this {label}: {error}") from None
    except Exception as error:
        reason = (
            f"atif-make could not convert this {label}: a record has an unexpected shape "
            f"({said(error)})"
        )
        raise IngestError(original, reason) from error
    if read != original and isinstance(document.get("notes"), str):
        document["notes"] = document["notes"].replace(str(read), str(original))
    return document, media


def to_dict(trajectory: Trajectory) -> dict[str, Any]:
    """``Trajectory.to_dict()`` from atif-make 0.10, in time linear in the document.

    atif-make's ``_clean`` cleans each dict value twice (once to test it, once to
    keep it), so its cost doubles with every level of nesting: tool arguments
    nested 22 dicts deep took 4 s, and 30 would take a quarter of an hour. This
    is the same serialisation (drop None and empty containers, keep required
    fields, leave out ``media``, ``schema_version`` first) with one pass per
    value and each dataclass's fields looked up once; a test holds it equal to
    atif-make's on every fixture.
    """
    trajectory.renumber()
    data = _plain(trajectory)
    ordered = {"schema_version": data.pop("schema_version", SCHEMA_VERSION)}
    ordered.update(data)
    return ordered


# Per dataclass: (field name, required?) for every field that is not excluded.
_PLANS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _plan(kind: type) -> tuple[tuple[str, bool], ...]:
    plan = _PLANS.get(kind)
    if plan is None:
        required: frozenset[str] = getattr(kind, "REQUIRED", frozenset())
        excluded: frozenset[str] = getattr(kind, "EXCLUDE", frozenset())
        plan = tuple((f.name, f.name in required) for f in fields(kind) if f.name not in excluded)
        _PLANS[kind] = plan
    return plan


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is dict:
        kept = {}
        for key, item in value.items():
            cleaned = _plain(item)
            if cleaned is not None:
                kept[key] = cleaned
        return kept
    if kind is list:
        return [_plain(item) for item in value]
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name, required in _plan(kind):
            cleaned = _plain(getattr(value, name))
            if required:
                if cleaned is None:
                    cleaned = {} if name == "arguments" else []
                out[name] = cleaned
            elif cleaned is not None and not (type(cleaned) in (dict, list) and not cleaned):
                out[name] = cleaned
        return out
    # Subclasses of dict and list (never made by atif-make today) go the slow way.
    if isinstance(value, dict):
        return {k: c for k, v in value.items() if (c := _plain(v)) is not None}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def media_data(store: MediaStore) -> dict[str, Any]:
    """Image bytes the ATIF refers to by relative path (``images/<digest>.<ext>``).

    ATIF keeps images beside the document, and a dict has no beside; the bytes
    travel in side data, base64-encoded, so storage can keep them as blobs.
    """
    return {
        f"images/{name}": {
            "media_type": item.media_type,
            "base64": base64.b64encode(item.data).decode("ascii"),
        }
        for name, item in store.items.items()
    }


def strip_subagents(
    document: dict[str, Any], locate: Callable[[dict[str, Any]], str | None]
) -> list[dict[str, Any]]:
    """Remove embedded subagent trajectories; return how to find each one instead.

    atif-make folds subagent logs it finds beside a session into the parent's
    ``subagent_trajectories``. Those files are ingested on their own, so keeping
    the copies would store every subagent twice and count its steps in the
    parent. The refs stay; where the subagent's file is known the ref gains a
    ``trajectory_path`` (ATIF's file-ref form) relative to the parent's folder.
    """
    embedded = document.pop("subagent_trajectories", None) or []
    found: dict[str, dict[str, Any]] = {}
    for sub in embedded:
        if not isinstance(sub, dict) or not isinstance(sub.get("trajectory_id"), str):
            continue
        found[sub["trajectory_id"]] = {
            "trajectory_id": sub["trajectory_id"],
            "session_id": sub.get("session_id"),
            "path": locate(sub),
            "tool_call_id": None,
            "steps": len(sub.get("steps") or ()),
        }
    if not found:
        return []
    for step in document.get("steps") or ():
        for result in (step.get("observation") or {}).get("results") or ():
            for ref in result.get("subagent_trajectory_ref") or ():
                entry = found.get(ref.get("trajectory_id"))
                if entry is None:
                    continue
                entry["tool_call_id"] = entry["tool_call_id"] or result.get("source_call_id")
                if entry["path"] and not ref.get("trajectory_path"):
                    ref["trajectory_path"] = entry["path"]
    return list(found.values())
