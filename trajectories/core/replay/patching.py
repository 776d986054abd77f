"""Patches laid onto the replayed files: Codex apply_patch, what Codex reported, unified diffs.

    codex_patch(state, "*** Begin Patch\\n*** Add File: a.py\\n+x = 1\\n*** End Patch\\n",
                "/repo", certain=True)
    state.text_of(state.resolve("a.py", "/repo"))   # "x = 1\\n"

A patch applies only to content the replay knows; a hunk that does not match, a file whose
content is unknown, or a patch that cannot be read loses the files it names (or, when it names
none, the directory it ran in). When the patch's outcome is unknown (``certain=False``) every
file it names is lost. Patches arrive from the apply_patch tool (``file_tools``) and from shell
commands (``git apply``, ``patch``, a here-document into ``apply_patch``: ``shell_files``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .calls import as_mapping
from .patches import (
    PatchError,
    apply_codex_chunks,
    apply_hunks,
    hunks_from_diff_body,
    parse_codex_patch,
    parse_unified,
)
from .paths import Resolved
from .state import FileState

_NAMED_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def side_patch(state: FileState, reported: Mapping[str, Any]) -> None:
    """Apply what Codex reported applying (patch_apply_end): per-file content or diffs."""
    if reported.get("success") is False:
        return
    changes = as_mapping(reported.get("changes"))
    for path, change in changes.items():
        change = as_mapping(change)
        target = state.resolve(str(path), state.paths.root)
        kind = change.get("type")
        if kind == "delete":
            state.delete(target)
            continue
        destination = target
        if isinstance(change.get("move_path"), str):
            destination = state.resolve(change["move_path"], state.paths.root)
        if kind == "add" and isinstance(change.get("content"), str):
            state.write(destination, change["content"], "apply_patch added the file")
            continue
        base = state.text_of(target)
        new: str | None = None
        if base is not None and isinstance(change.get("unified_diff"), str):
            try:
                new = apply_hunks(base, hunks_from_diff_body(change["unified_diff"]))
            except PatchError:
                new = None
        _update(state, target, destination, base, new, moved=destination.key != target.key)


def codex_patch(state: FileState, text: str, cwd: str | None, *, certain: bool) -> None:
    try:
        file_ops = parse_codex_patch(text)
    except PatchError:
        paths = [a or b for a, b in _NAMED_FILE.findall(text)]
        if not paths:
            state.lose_tree(state.paths.tree_dir(cwd), "apply_patch the replay cannot read")
        for path in paths:
            state.lose(state.resolve(path, cwd), "apply_patch the replay cannot read")
        return
    for file_op in file_ops:
        target = state.resolve(file_op.path, cwd)
        if not certain:
            state.lose(target, "apply_patch whose outcome is unknown")
            if file_op.move_to:
                state.lose(
                    state.resolve(file_op.move_to, cwd), "apply_patch whose outcome is unknown"
                )
            continue
        if file_op.kind == "add":
            state.write(target, file_op.content, "apply_patch added the file")
        elif file_op.kind == "delete":
            state.delete(target)
        else:
            destination = state.resolve(file_op.move_to, cwd) if file_op.move_to else target
            base = state.text_of(target)
            new: str | None = None
            if base is not None:
                try:
                    new = apply_codex_chunks(base, file_op.chunks)
                except PatchError:
                    new = None
            _update(state, target, destination, base, new, moved=bool(file_op.move_to))


def _update(
    state: FileState,
    target: Resolved,
    destination: Resolved,
    base: str | None,
    new: str | None,
    *,
    moved: bool,
) -> None:
    """Lay down an apply_patch update: the new content, or a loss that says why there is none."""
    if moved:
        state.delete(target)
    if new is None:
        why = "unknown" if base is None else "did not match the known"
        state.lose(destination, f"apply_patch update on {why} content")
    else:
        state.write(destination, new, "apply_patch updated the file")


def unified_patch(
    state: FileState, text: str | None, base_dir: str | None, strip: int, certain: bool
) -> None:
    if text is None:
        state.lose_tree(state.paths.tree_dir(base_dir), "patch whose content is not recorded")
        return
    try:
        files = parse_unified(text, strip)
    except PatchError:
        state.lose_tree(state.paths.tree_dir(base_dir), "patch the replay cannot read")
        return
    for patched in files:
        source = state.resolve(patched.source, base_dir) if patched.source else None
        target = state.resolve(patched.target, base_dir) if patched.target else None
        if not certain:
            for where in (source, target):
                if where is not None:
                    state.lose(where, "patch whose outcome is unknown")
            continue
        if target is None and source is not None:
            state.delete(source)
            continue
        assert target is not None
        if source is None:
            state.write(target, patched.added_content or "", "patch added the file")
            continue
        base = state.text_of(source)
        new = None
        if base is not None:
            try:
                new = apply_hunks(base, patched.hunks)
            except PatchError:
                new = None
        if source.key != target.key:
            state.delete(source)
        if new is None:
            state.lose(target, "patch on content the replay does not know")
        else:
            state.write(target, new, "patched")
