"""Content hashes that name images: a base image's recipe and a build context's files."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HASH_CHARS = 16  # 64 bits: collisions among a machine's images are not a practical concern


def recipe_hash(recipe: Mapping[str, Any]) -> str:
    """Hash of a JSON-able recipe, independent of key order."""
    text = json.dumps(recipe, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_CHARS]


def context_hash(root: Path) -> str:
    """Hash of a build context: every path, its type, its executable bit and its content.

    Symbolic links are hashed by their target, not followed, as Docker sends them. Ownership
    and timestamps are left out on purpose: a context copied elsewhere still hits the cache.
    """
    digest = hashlib.sha256()
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"build context {root} is not a directory")
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        here = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entry = f"L {rel}\0{os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                entry = f"D {rel}"
            elif stat.S_ISREG(info.st_mode):
                with path.open("rb") as fh:
                    content = hashlib.file_digest(fh, "sha256").hexdigest()
                entry = f"F {rel}\0{int(bool(info.st_mode & 0o111))}\0{content}"
            else:
                entry = f"S {rel}"
            digest.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()[:HASH_CHARS]
