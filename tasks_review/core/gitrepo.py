"""The starting state's git repository, made on the host as a tar the task image extracts.

    data = repository_tar(files)        # bytes of a tar holding .git/, owned by uid/gid 1000
    # environment/Dockerfile:  ADD --chown=agent:agent project/ repository.tar /app/

One synthetic commit of exactly ``files`` on ``main``, with a fixed author, committer and date
and no upstream history: the same commit ``git init && git add --all --force && git commit``
makes with those settings (a test holds them equal), without running git in the image, where
each build step costs a container commit (see ``taskfiles``). The index carries no stat data
(zero times, inode and device, as ``git update-index --index-info`` writes), so the same files
always give the same bytes; git re-reads each file once, finds it unchanged and refreshes the
index on the agent's first ``git status``.

Written here rather than with a git library: the four formats used (loose objects, trees, one
commit, index version 2; gitformat-index(5)) are small and stable, the bytes must not depend on
a library's or the host's git version, and the write stage then needs no git on the host.
"""

from __future__ import annotations

import hashlib
import io
import struct
import tarfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

AUTHOR = "traj2env <traj2env@localhost>"
TIMESTAMP = 946684800  # 2000-01-01T00:00:00Z
BRANCH = "main"
MESSAGE = "Starting state\n"
_FILE_MODE = 0o100644  # every project file is laid down 0644 (taskfiles)
_CONFIG = (
    "[core]\n"
    "\trepositoryformatversion = 0\n"
    "\tfilemode = true\n"
    "\tbare = false\n"
    "\tlogallrefupdates = true\n"
)


@dataclass(frozen=True, slots=True)
class Repository:
    commit: str  # hex sha1 of the one commit
    tree: str
    objects: Mapping[str, bytes]  # hex sha1 -> zlib-compressed loose object
    index: bytes


def _object(kind: bytes, body: bytes) -> tuple[str, bytes]:
    raw = kind + b" " + str(len(body)).encode() + b"\0" + body
    return hashlib.sha1(raw).hexdigest(), zlib.compress(raw, 9)


def _tracked(path: str) -> bool:
    # git refuses a .git component anywhere in a tree (fsck: hasDotgit); the miner never lays
    # one down, but a name is checked here too.
    return all(part.lower() != ".git" for part in path.split("/"))


def build(files: Mapping[str, bytes]) -> Repository:
    """The repository of ``files`` (POSIX paths relative to the project) in one commit."""
    objects: dict[str, bytes] = {}
    blobs: dict[bytes, tuple[str, int]] = {}
    for path, data in files.items():
        if not _tracked(path):
            continue
        sha, compressed = _object(b"blob", data)
        objects[sha] = compressed
        blobs[path.encode("utf-8", "surrogateescape")] = (sha, len(data))

    def tree(prefix: bytes) -> str:
        entries: dict[bytes, tuple[bytes, str]] = {}  # sort key -> (entry bytes, ...)
        children = sorted(
            {p[len(prefix) :].split(b"/", 1)[0] for p in blobs if p.startswith(prefix)}
        )
        for name in children:
            full = prefix + name
            if full in blobs:
                sha = blobs[full][0]
                entries[name] = (b"100644 " + name + b"\0" + bytes.fromhex(sha), sha)
            else:
                sha = tree(full + b"/")
                # git orders a folder as if its name ended with "/"
                entries[name + b"/"] = (b"40000 " + name + b"\0" + bytes.fromhex(sha), sha)
        body = b"".join(entries[key][0] for key in sorted(entries))
        sha, compressed = _object(b"tree", body)
        objects[sha] = compressed
        return sha

    root = tree(b"")
    stamp = f"{AUTHOR} {TIMESTAMP} +0000"
    commit_body = f"tree {root}\nauthor {stamp}\ncommitter {stamp}\n\n{MESSAGE}".encode()
    commit, compressed = _object(b"commit", commit_body)
    objects[commit] = compressed
    return Repository(commit=commit, tree=root, objects=objects, index=_index(blobs))


def _index(blobs: Mapping[bytes, tuple[str, int]]) -> bytes:
    out = bytearray(b"DIRC" + struct.pack(">II", 2, len(blobs)))
    for path in sorted(blobs):
        sha, size = blobs[path]
        # ctime, mtime (seconds, nanoseconds), dev, ino: zero; then mode, uid, gid, size
        entry = struct.pack(">10I", 0, 0, 0, 0, 0, 0, _FILE_MODE, 0, 0, size & 0xFFFFFFFF)
        entry += bytes.fromhex(sha) + struct.pack(">H", min(len(path), 0xFFF)) + path
        out += entry + b"\0" * (8 - len(entry) % 8)  # NUL-padded to a multiple of 8, at least 1
    return bytes(out) + hashlib.sha1(out).digest()


def repository_tar(
    files: Mapping[str, bytes], *, uid: int = 1000, gid: int = 1000, owner: str = "agent"
) -> bytes:
    """A tar of ``.git/`` for ``files``, every entry owned by ``uid``/``gid`` (Docker keeps a
    tar's owners when ``ADD`` extracts it), folders listed before what they hold."""
    repo = build(files)
    entries: dict[str, bytes | None] = {  # None: a folder
        ".git": None,
        ".git/HEAD": f"ref: refs/heads/{BRANCH}\n".encode(),
        ".git/config": _CONFIG.encode(),
        ".git/index": repo.index,
        ".git/objects": None,
        ".git/objects/info": None,
        ".git/objects/pack": None,
        ".git/refs": None,
        ".git/refs/heads": None,
        ".git/refs/heads/" + BRANCH: f"{repo.commit}\n".encode(),
        ".git/refs/tags": None,
    }
    for sha, compressed in repo.objects.items():
        entries[f".git/objects/{sha[:2]}"] = None
        entries[f".git/objects/{sha[:2]}/{sha[2:]}"] = compressed
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in sorted(entries):
            data = entries[name]
            info = tarfile.TarInfo(name)
            info.mtime = TIMESTAMP
            info.uid, info.gid, info.uname, info.gname = uid, gid, owner, owner
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                # loose objects are read-only, as git writes them
                info.size, info.mode = len(data), 0o444 if "/objects/" in name else 0o644
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
