"""Tar streams in and out of sandboxes, with the safety rules of a submission crossing over.

Copy-out keeps regular files only. A symbolic link is refused whatever it points at: it is
resolved where it lands, so a link that looks harmless in the agent's container can reach the
grader's tests or secrets in the verifier's. Devices, FIFOs and paths that climb out of the copied
folder are refused too. Hard links are kept as copies of the file they link to: that file is
earlier in the same archive, i.e. inside the copied folder, so its content is the project's.
Size and entry limits are enforced while reading, so an oversized submission costs at most the
limit in memory and time.
"""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

DEFAULT_MAX_BYTES = 64 << 20
DEFAULT_MAX_ENTRIES = 20_000
# Headers, long-name records and padding per entry, generously: bounds the raw stream so a flood
# of empty entries cannot run for ever under the file-content limit.
_RAW_PER_ENTRY = 8192


@dataclass(frozen=True, slots=True)
class FileEntry:
    data: bytes
    executable: bool = False
    private: bool = False  # readable by its owner alone (0600): the hidden probes


@dataclass(frozen=True, slots=True)
class Refusal:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Extracted:
    """Regular files by path relative to the copied folder, and what was refused."""

    files: Mapping[str, FileEntry] = field(default_factory=dict)
    refused: tuple[Refusal, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(len(entry.data) for entry in self.files.values())


class ArchiveTooLarge(ValueError):
    """The copied tree exceeds the byte or entry limit; nothing of it is returned."""


class UnsafePath(ValueError):
    """A path to copy in is absolute, empty or climbs out with '..'."""


def safe_relative(path: str) -> str | None:
    """``path`` normalised to a relative POSIX path inside its root, or None when it is not."""
    if not path or "\0" in path:
        return None
    pure = PurePosixPath(path)
    if pure.is_absolute():
        return None
    parts = [part for part in pure.parts if part != "."]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def pack(files: Mapping[str, bytes | FileEntry], *, uid: int, gid: int) -> bytes:
    """A tar of ``files`` (relative paths) owned by uid:gid, with their parent folders.

    Folders get explicit entries because Docker creates missing ones as root, which the
    unprivileged user could then not write into.
    """
    now = int(time.time())
    buffer = io.BytesIO()
    entries: dict[str, FileEntry] = {}
    for raw, value in files.items():
        rel = safe_relative(raw)
        if rel is None:
            raise UnsafePath(f"refusing to copy in {raw!r}: not a relative path inside the target")
        entries[rel] = value if isinstance(value, FileEntry) else FileEntry(value)
    parents = {str(parent) for rel in entries for parent in PurePosixPath(rel).parents}
    folders = sorted(parents - {"."})
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            info.uid, info.gid, info.mtime = uid, gid, now
            tar.addfile(info)
        for rel, entry in sorted(entries.items()):
            info = tarfile.TarInfo(rel)
            info.size = len(entry.data)
            info.mode = 0o600 if entry.private else 0o755 if entry.executable else 0o644
            info.uid, info.gid, info.mtime = uid, gid, now
            tar.addfile(info, io.BytesIO(entry.data))
    return buffer.getvalue()


class _ChunkReader:
    """A read()-able view of an iterator of byte chunks that stops past ``limit`` bytes."""

    def __init__(self, chunks: Iterable[bytes], limit: int) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = b""
        self._limit = limit
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._pending) < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self.consumed += len(chunk)
            if self.consumed > self._limit:
                raise ArchiveTooLarge(f"the archive exceeds {self._limit} bytes")
            self._pending += chunk
        if size < 0:
            size = len(self._pending)
        data, self._pending = self._pending[:size], self._pending[size:]
        return data


def extract_regular_files(
    chunks: Iterable[bytes],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> Extracted:
    """Read a ``docker cp``-style tar (the copied folder's own name first) into memory.

    Paths come back relative to the copied folder; when a single file was copied, its path is its
    name. Raises ArchiveTooLarge past ``max_bytes`` of file content or ``max_entries`` entries.
    """
    reader = _ChunkReader(chunks, max_bytes + _RAW_PER_ENTRY * (max_entries + 2))
    files: dict[str, FileEntry] = {}
    by_member: dict[str, str] = {}  # archive name -> our relative path, for hard links
    refused: list[Refusal] = []
    root: str | None = None
    total = 0
    # The reader has read() only, which is all stream mode ("r|") uses; typeshed wants more.
    with tarfile.open(fileobj=reader, mode="r|") as tar:  # type: ignore[call-overload]
        for count, member in enumerate(tar, 1):
            if count > max_entries:
                raise ArchiveTooLarge(f"more than {max_entries} entries")
            name = safe_relative(member.name)
            if name is None:
                refused.append(Refusal(member.name, "path outside the copied folder"))
                continue
            if count == 1 and member.isdir():
                root = name
                continue
            if root is None:
                rel: str | None = name
            elif name.startswith(root + "/"):
                rel = name[len(root) + 1 :]
            else:
                rel = None
            if rel is None:
                refused.append(Refusal(member.name, "path outside the copied folder"))
                continue
            if member.isdir():
                continue
            if member.issym():
                refused.append(Refusal(rel, f"symbolic link (to {member.linkname})"))
            elif member.islnk():
                source = by_member.get(safe_relative(member.linkname) or "")
                if source is None:
                    refused.append(Refusal(rel, f"hard link to {member.linkname}, not copied"))
                else:
                    files[rel] = files[source]
                    by_member[name] = rel
                    total += len(files[rel].data)
            elif member.isreg():
                total += member.size
                if total > max_bytes:
                    raise ArchiveTooLarge(f"more than {max_bytes} bytes of files")
                handle = tar.extractfile(member)
                data = handle.read() if handle is not None else b""
                files[rel] = FileEntry(data, executable=bool(member.mode & 0o111))
                by_member[name] = rel
            else:
                refused.append(Refusal(rel, "special file (device, FIFO or socket)"))
            if total > max_bytes:
                raise ArchiveTooLarge(f"more than {max_bytes} bytes of files")
    return Extracted(files=files, refused=tuple(refused))
