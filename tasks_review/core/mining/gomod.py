"""A Go check's module: the go.mod it builds under, and whether its content is known.

    module = go_module(fix, blobs, "cmd/tool")
    module.path, module.known, module.vendored       # "go.mod", True, False

``go test``, ``go vet`` and ``go build`` of packages need the go.mod of the folder they run in
or the closest one above it; without one, Go stops before compiling anything. The modules it
requires are the task writer's business (``trials/gomodules.py`` fetches them through the
user's GOPROXY, pinned by go.sum), unless vendored (``vendor/modules.txt`` beside go.mod, which
Go then uses by default) or replaced by a local folder (``replace x => ../x``).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from trajectories.core.blobs import BlobStore

from .fix import Fix


@dataclass(frozen=True, slots=True)
class GoModule:
    path: str  # the go.mod's project path
    known: bool  # its content is known at the start and the reference
    vendored: bool = False


def go_module(fix: Fix, blobs: BlobStore, folder: str) -> GoModule | None:
    """The go.mod a Go check in ``folder`` builds under; None when the replay never saw one."""
    seen = {*fix.start_entries, *fix.ref_entries}
    while True:
        path = posixpath.normpath(posixpath.join(folder, "go.mod"))
        if path in seen:
            break
        if folder in ("", "."):
            return None
        folder = posixpath.dirname(folder) or "."
    sha = fix.ref.get(path)
    if sha is None or fix.start.get(path) is None:
        return GoModule(path, known=False)
    module_dir = posixpath.dirname(path)
    vendor = (
        posixpath.join(module_dir, "vendor/modules.txt") if module_dir else "vendor/modules.txt"
    )
    vendored = vendor in fix.start and vendor in fix.ref
    try:
        blobs.get(sha).decode("utf-8")
    except UnicodeDecodeError:
        return GoModule(path, known=False)
    return GoModule(path, known=True, vendored=vendored)
