"""The database-backed content-addressed store: the one seam between the core and blob storage."""

from __future__ import annotations

import zlib

from .core.blobs import sha256_hex
from .models import Blob


class DbBlobs:
    """Implements trajectories.core.blobs.BlobStore over the Blob table.

    Writes are buffered and flushed in bulk (ignore_conflicts makes a concurrent writer of the same
    content harmless), because a long replay puts thousands of small blobs.
    """

    def __init__(self, *, flush_every: int = 500) -> None:
        self._pending: dict[str, bytes] = {}
        self._known: set[str] = set()
        self._flush_every = flush_every

    def put(self, data: bytes) -> str:
        sha = sha256_hex(data)
        if sha in self._known or sha in self._pending:
            return sha
        self._pending[sha] = data
        if len(self._pending) >= self._flush_every:
            self.flush()
        return sha

    def get(self, sha: str) -> bytes:
        if sha in self._pending:
            return self._pending[sha]
        try:
            return Blob.objects.get(sha256=sha).content()
        except Blob.DoesNotExist:
            raise KeyError(sha) from None

    def has(self, sha: str) -> bool:
        return (
            sha in self._pending or sha in self._known or Blob.objects.filter(sha256=sha).exists()
        )

    def flush(self) -> None:
        if not self._pending:
            return
        # zlib level 1: most of level 6's saving at a third of the time; ingest is bound by it.
        Blob.objects.bulk_create(
            [
                Blob(sha256=sha, size=len(d), data=zlib.compress(d, 1))
                for sha, d in self._pending.items()
            ],
            ignore_conflicts=True,
            batch_size=200,
        )
        self._known.update(self._pending)
        self._pending.clear()


def blob_put(data: bytes) -> Blob:
    """Store one blob now and return its row (for single large documents)."""
    sha = sha256_hex(data)
    blob, _ = Blob.objects.get_or_create(
        sha256=sha, defaults={"size": len(data), "data": zlib.compress(data, 1)}
    )
    return blob
