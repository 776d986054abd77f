"""Replaying small hand-written trajectories and reading back the files they leave.

A state renders as ``{path: content}`` for known files, ``LOST`` / ``PARTIAL`` for files the
replay only knows changed or only saw in part, ``presumed(content)`` for files a command may have
changed that keep their last known content, and ``UNCERTAIN`` for tree markers (``src/**``).
"""

from __future__ import annotations

from collections.abc import Mapping

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import Entry, ReplayResult, ShellCommand, Status, is_tree, replay
from trajectories.core.replay.effects import Effect
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.synthetic import AtifBuilder

ROOT = "/repo"
LOST, PARTIAL, UNCERTAIN = "<lost>", "<partial>", "<uncertain>"


def presumed(text: str) -> str:
    """How ``render`` shows a file last known as ``text`` that a command may have changed."""
    return f"<presumed>{text}"


def presumed_under(files: Mapping[str, str], directory: str = "") -> dict[str, str]:
    """``files`` after a script that may have written anything under ``directory``: those
    under it keep their content as a presumption, beside the folder's marker."""
    inside = {
        p: presumed(t) for p, t in files.items() if not directory or p.startswith(directory + "/")
    }
    return {**files, **inside, (f"{directory}/**" if directory else "**"): UNCERTAIN}


def run(
    b: AtifBuilder, *, side: bool = True, root: str | None = ROOT
) -> tuple[ReplayResult, MemoryBlobs]:
    atif, side_data = b.build()
    blobs = MemoryBlobs()
    return replay(atif, side_data if side else None, root=root, blobs=blobs), blobs


def render(state: Mapping[str, Entry] | ReplayResult, blobs: MemoryBlobs) -> dict[str, str]:
    """A state as {path: text | LOST | PARTIAL | UNCERTAIN}."""
    entries = state.final_state if isinstance(state, ReplayResult) else state
    out = {}
    for path, entry in entries.items():
        if is_tree(path):
            out[path] = UNCERTAIN
        elif entry.status is Status.KNOWN:
            assert entry.sha is not None
            out[path] = blobs.get(entry.sha).decode()
        elif entry.status is Status.UNCERTAIN:
            assert entry.sha is not None
            out[path] = presumed(blobs.get(entry.sha).decode())
        else:
            out[path] = LOST if entry.status is Status.LOST else PARTIAL
    return out


def files_of(b: AtifBuilder, *, side: bool = True, root: str | None = ROOT) -> dict[str, str]:
    result, blobs = run(b, side=side, root=root)
    return render(result, blobs)


def cc() -> AtifBuilder:
    return AtifBuilder("claude-code", root=ROOT)


def codex() -> AtifBuilder:
    return AtifBuilder("codex", root=ROOT)


def bash(
    b: AtifBuilder, command: str, output: str = "", *, code: int = 0, cwd: str | None = None
) -> str:
    """A Claude Code Bash call that exited with ``code`` (flagged the way Claude Code does)."""
    if code:
        text = f"Exit code {code}\n{output}"
        return b.call("Bash", {"command": command}, text, error=True, cwd=cwd)
    return b.call("Bash", {"command": command}, output, cwd=cwd)


def only_command(b: AtifBuilder, *, side: bool = True) -> ShellCommand:
    atif, side_data = b.build()
    result = replay(atif, side_data if side else None, root=ROOT, blobs=MemoryBlobs())
    (command,) = result.commands
    return command


def numbered(text: str, start: int = 1) -> str:
    """Claude Code's Read output for ``text`` (cat -n with the → separator)."""
    lines = text.split("\n")
    return "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(lines))


def after(
    command: str, output: str = "", *, files: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The project's files after one Bash ``command``, ``files`` having been written first."""
    b = cc()
    for name, content in (files or {}).items():
        b.call("Write", {"file_path": f"{ROOT}/{name}", "content": content}, "ok")
    bash(b, command, output)
    return files_of(b)


class FakeFiles:
    """The engine's side of the ``effects.Files`` seam: given texts and folders, effects kept."""

    def __init__(self, texts: Mapping[str, str] | None = None, dirs: tuple[str, ...] = ()) -> None:
        self.paths = Paths(ROOT)
        self.texts = dict(texts or {})
        self.dirs = set(dirs)
        self.effects: list[Effect] = []

    def text(self, path: str) -> str | None:
        return self.texts.get(path)

    def is_dir(self, path: str) -> bool | None:
        if path in self.dirs:
            return True
        return False if path in self.texts else None

    def apply(self, effect: Effect) -> None:
        self.effects.append(effect)

    def absolute(self, raw: str, cwd: str | None) -> str | None:
        return self.paths.absolute(raw, cwd)
