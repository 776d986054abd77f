"""A Go check's module: the go.mod it builds under, and whether building needs downloads.

    module = go_module(fix, blobs, "cmd/tool")
    module.path, module.known, module.downloads       # "go.mod", True, ("github.com/x/y v1.2.0",)

``go test``, ``go vet`` and ``go build`` of packages need the go.mod of the folder they run in
or the closest one above it; without one, Go stops before compiling anything. Every module a
go.mod requires must then come from somewhere: the task's image has no network and no module
cache, so only a vendored module (``vendor/modules.txt`` beside go.mod, which Go then uses by
default) or a requirement replaced by a local folder (``replace x => ../x``) builds. A module
that requires nothing else needs the standard library alone.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from trajectories.core.blobs import BlobStore

from .fix import Fix

_REQUIRE_BLOCK = re.compile(r"^require\s*\((.*?)^\)", re.MULTILINE | re.DOTALL)
_REQUIRE_LINE = re.compile(r"^require\s+([^\s(]\S*)\s+(\S+)", re.MULTILINE)
_REPLACE_BLOCK = re.compile(r"^replace\s*\((.*?)^\)", re.MULTILINE | re.DOTALL)
_REPLACE_LINE = re.compile(r"^replace\s+([^(\s].*)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class GoModule:
    path: str  # the go.mod's project path
    known: bool  # its content is known at the start and the reference
    downloads: tuple[str, ...] = ()  # "module version" of each requirement with no local source
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
        content = blobs.get(sha).decode("utf-8")
    except UnicodeDecodeError:
        return GoModule(path, known=False)
    downloads = () if vendored else tuple(_downloads(content))
    return GoModule(path, known=True, downloads=downloads, vendored=vendored)


def _downloads(go_mod: str) -> list[str]:
    """Requirements of a go.mod that no local replacement provides, as "module version"."""
    text = re.sub(r"//.*", "", go_mod)
    required: list[tuple[str, str]] = []
    for block in _REQUIRE_BLOCK.findall(text):
        for line in block.splitlines():
            parts = line.split()
            if len(parts) >= 2:
                required.append((parts[0], parts[1]))
    required += _REQUIRE_LINE.findall(text)
    local: set[str] = set()
    replacements = [line for block in _REPLACE_BLOCK.findall(text) for line in block.splitlines()]
    replacements += _REPLACE_LINE.findall(text)
    for line in replacements:
        if "=>" not in line:
            continue
        old, new = (side.split() for side in line.split("=>", 1))
        if old and new and new[0].startswith(("./", "../", "/")):
            local.add(old[0])
    return [f"{module} {version}" for module, version in required if module not in local]
