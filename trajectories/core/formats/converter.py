"""Running atif-make, and what ingest does to its output before keeping it.

atif-make reads the file itself, line by line, and silently skips a line that
does not decode on its own. A line holding two objects (a dropped newline) or a
byte-order mark on line one would therefore lose records. For those files only,
the converter is given a clean copy written from the records already read, with
links to the session's sibling folders (subagents, persisted tool results) so
nothing it looks for beside the log goes missing.
"""

from __future__ import annotations

import base64
import json
import tempfile
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from atif_make import convert
from atif_make.atif import SCHEMA_VERSION, MediaStore, Trajectory

from .model import IngestError
from .source import Source


def run_atif_make(
    source: Source, variant: str, label: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Convert with atif-make: the ATIF document as a plain dict, and its images."""
    path = source.path
    if not source.needs_clean_copy:
        return _convert(path, path, variant, label)
    try:
        with tempfile.TemporaryDirectory(prefix="traj2env-") as tmp:
            where = Path(tmp) / "copy" / (path.parent.name or "log")
            where.mkdir(parents=True)
            copy = where / path.name
            with copy.open("w", encoding="utf-8") as handle:
                for record in source.records:
                    handle.write(json.dumps(record.value, ensure_ascii=False))
                    handle.write("\n")
            # A session keeps subagents and oversized results in `<stem>/`; a
            # subagent finds the session's `tool-results/` two levels up.
            _link(where / path.stem, path.parent / path.stem)
            _link(where.parent / "tool-results", path.parent.parent / "tool-results")
            return _convert(copy, path, variant, label)
    except OSError as error:
        reason = f"could not write the clean copy atif-make needs: {error.strerror or error}"
        raise IngestError(path, reason) from None


def _link(link: Path, target: Path) -> None:
    if target.is_dir() and not link.exists():
        link.symlink_to(target.resolve(), target_is_directory=True)


def _convert(
    read: Path, original: Path, variant: str, label: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    # atif-make is a library of hand-written parsers over untrusted logs: a
    # number where it expects text surfaces as TypeError, a bad shape as
    # KeyError. Any of them means this file cannot be converted.
    try:
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
            f"({type(error).__name__}: {error})"
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
    value; a test holds it equal to atif-make's on every fixture.
    """
    trajectory.renumber()
    data = _plain(trajectory)
    ordered = {"schema_version": data.pop("schema_version", SCHEMA_VERSION)}
    ordered.update(data)
    return ordered


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        required: frozenset[str] = getattr(value, "REQUIRED", frozenset())
        excluded: frozenset[str] = getattr(value, "EXCLUDE", frozenset())
        out: dict[str, Any] = {}
        for field in fields(value):
            if field.name in excluded:
                continue
            cleaned = _plain(getattr(value, field.name))
            if field.name in required:
                empty: Any = {} if field.name == "arguments" else []
                out[field.name] = cleaned if cleaned is not None else empty
            elif cleaned is not None and not (isinstance(cleaned, dict | list) and not cleaned):
                out[field.name] = cleaned
        return out
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            cleaned = _plain(item)
            if cleaned is not None:
                kept[key] = cleaned
        return kept
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
