"""The content-addressed store seam: file contents go in as bytes and come back by sha256.

Replay stores every file version it learns through this protocol and keeps only the hashes in
its events and state index, so a 20,000-step trajectory that rewrites one file costs one blob per
distinct content, not one per step. The Django adapter implements the same protocol over a table.
"""

from __future__ import annotations

import hashlib
from typing import Protocol, runtime_checkable


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@runtime_checkable
class BlobStore(Protocol):
    def put(self, data: bytes) -> str:
        """Store ``data`` (idempotent) and return its sha256 hex digest."""
        ...

    def get(self, sha: str) -> bytes:
        """Return the bytes stored under ``sha``; raise KeyError when absent."""
        ...

    def has(self, sha: str) -> bool: ...


class MemoryBlobs:
    """A dict-backed BlobStore for tests and one-off command-line runs."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        sha = sha256_hex(data)
        self._data.setdefault(sha, bytes(data))
        return sha

    def get(self, sha: str) -> bytes:
        return self._data[sha]

    def has(self, sha: str) -> bool:
        return sha in self._data

    def __len__(self) -> int:
        return len(self._data)
