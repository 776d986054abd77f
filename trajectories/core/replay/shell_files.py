"""The replayed files as the shell walker sees them: the ``effects.Files`` sink over the state.

    run = effects.run_script("cp a b && rm -r build", "/repo", ShellFiles(state, certain=True), "")

Each effect lands as soon as the walker knows it, so a later command of the same line sees what
an earlier one did. ``certain`` is whether the command line is known to have run to its end: when
it failed, or its outcome is unknown, what it would have written or removed is lost instead.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence

from . import effects as fx
from .model import Change, ChangeKind, Entry, is_tree, tree_key, under
from .patching import codex_patch, unified_patch
from .paths import Resolved
from .state import FileState


class ShellFiles:
    def __init__(self, state: FileState, *, certain: bool) -> None:
        self.state = state
        self.certain = certain

    def text(self, path: str) -> str | None:
        return self.state.text_of(self.state.paths.of_abs(path))

    def is_dir(self, path: str) -> bool | None:
        resolved = self.state.paths.of_abs(path)
        return None if resolved.flagged else self.state.is_dir(resolved.key)

    def absolute(self, raw: str, cwd: str | None) -> str | None:
        return self.state.paths.absolute(raw, cwd)

    def apply(self, effect: fx.Effect) -> None:
        state, paths = self.state, self.state.paths
        if isinstance(effect, fx.LostTree):
            directory = paths.tree_dir(effect.directory)
            state.lose_tree(directory, effect.reason, presume=not effect.rewrites)
        elif isinstance(effect, fx.Write):
            self._write(effect)
        elif isinstance(effect, fx.Delete):
            target = paths.of_abs(effect.path)
            kind = None if target.flagged else state.is_dir(target.key)
            recursive = effect.recursive and kind is not False
            if kind is True and not recursive:
                return  # rm without -r refuses a directory
            if not self.certain:
                state.lose(target, "removal whose outcome is unknown")
                if recursive:
                    state.lose_tree(paths.tree_dir(effect.path), "removal whose outcome is unknown")
                return
            if recursive and not target.flagged:
                state.set(Resolved(tree_key(target.key), None), Change(ChangeKind.DELETED))
            state.delete(target)
        elif isinstance(effect, fx.GlobEffect):
            self._glob(effect)
        elif isinstance(effect, fx.Move | fx.Copy):
            self._transfer(effect)
        elif isinstance(effect, fx.MakeDir):
            target = paths.of_abs(effect.path)
            if not target.flagged:
                state.dirs.add(target.key)
        elif isinstance(effect, fx.Touch):
            target = paths.of_abs(effect.path)
            if self.certain and target.key in state.absent:
                state.write(target, "", "created empty by touch")
        elif isinstance(effect, fx.CodexPatch):
            codex_patch(state, effect.text, effect.base, certain=self.certain)
        elif isinstance(effect, fx.UnifiedPatch):
            unified_patch(state, effect.text, effect.base, effect.strip, self.certain)

    def _write(self, effect: fx.Write) -> None:
        state = self.state
        target = state.paths.of_abs(effect.path)
        content = effect.content
        if content is not None and effect.append:
            base = state.text_of(target)
            if base is None and not target.flagged and target.key in state.absent:
                base = ""
            content = None if base is None else base + content
        if content is None or not self.certain:
            state.lose(target, effect.reason or "written by a shell command")
        else:
            # Output made from a presumed file (`cat a > b`) is presumed too.
            presumed = bool(state.presumed_reads)
            reason = effect.reason or "written by a shell command"
            state.write(target, content, reason, presumed=presumed)

    def _glob(self, effect: fx.GlobEffect) -> None:
        state = self.state
        pattern = state.paths.of_abs(effect.pattern)
        if pattern.flagged:
            return
        parts = pattern.key.split("/")
        for key in [k for k in state.files if not is_tree(k)]:
            key_parts = key.split("/")
            if len(key_parts) < len(parts) or not _glob_match(parts, key_parts[: len(parts)]):
                continue
            if len(key_parts) > len(parts) and not effect.recursive:
                continue
            target = Resolved(key, None)
            if effect.delete and self.certain:
                state.delete(target)
            else:
                state.lose(target, effect.reason)

    def _transfer(self, effect: fx.Move | fx.Copy) -> None:
        state, paths = self.state, self.state.paths
        src, dst = paths.of_abs(effect.src), paths.of_abs(effect.dst)
        moving = isinstance(effect, fx.Move)
        into = effect.into_dir or (not dst.flagged and state.is_dir(dst.key) is True)
        target = (
            paths.of_abs(posixpath.join(effect.dst, posixpath.basename(effect.src)))
            if into
            else dst
        )
        src_is_dir = not src.flagged and (state.is_dir(src.key) is True)
        reason = "moved" if moving else "copied"
        if src_is_dir:
            if isinstance(effect, fx.Copy) and not effect.recursive:
                return  # cp without -r refuses directories
            inside = [k for k in state.files if under(k, src.key)]
            for key in inside:
                rel = key[len(src.key) + 1 :]
                if is_tree(key):
                    destination = target.key + "/" + rel if target.key else rel
                    if not target.flagged:
                        state.set(
                            Resolved(destination, None), Change(ChangeKind.LOST, reason=reason)
                        )
                    continue
                destination_path = posixpath.join(target.abs or effect.dst, rel)
                self._place(paths.of_abs(destination_path), state.files[key], reason)
            if moving and self.certain:
                state.set(Resolved(tree_key(src.key), None), Change(ChangeKind.DELETED))
                state.dirs.discard(src.key)
            elif moving:
                state.lose_tree(src.key, "move whose outcome is unknown")
            if not target.flagged:
                state.dirs.add(target.key)
            return
        self._place(target, None if src.flagged else state.files.get(src.key), reason)
        if moving:
            if self.certain:
                state.delete(src)
            else:
                state.lose(src, "move whose outcome is unknown")

    def _place(self, target: Resolved, entry: Entry | None, reason: str) -> None:
        state = self.state
        if entry is not None and entry.presumed and self.certain:
            if target.flagged:
                state.set(target, Change(ChangeKind.WRITTEN, None, reason))
            elif state.files.get(target.key) != entry:
                presumed = not entry.known  # a copy of a presumed file is presumed
                state.set(target, Change(ChangeKind.WRITTEN, entry.sha, reason, presumed=presumed))
        else:
            state.lose(target, f"{reason} from content the replay does not know")


def _glob_match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """Shell globbing per path segment: `*` stays inside a segment and skips dotfiles."""
    for pat, part in zip(pattern, parts, strict=True):
        if pat == part:
            continue
        if part.startswith(".") and not pat.startswith("."):
            return False
        if not fnmatch.fnmatchcase(part, pat):
            return False
    return True
