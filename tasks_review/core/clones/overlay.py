"""A session's project laid over the user's own clone: which clone, which commit, which files.

    project = Project.recorded(cwd="/Users/me/app", started_at=when, side_data=side)
    overlay = clone_overlay({"/Users/me/app": Path("/home/me/src/app")}, project, blobs)
    overlay.seed            # {path: sha} of the files at the starting commit, stored in blobs
    overlay.commit, overlay.how     # "0294…", "recorded by the session"
    overlay.reason          # why nothing was laid down ("" when the seed is the tree)
    replay(..., seed=overlay.seed)  # files the log never showed are known

Which clone: the configured project that is the session's directory or a folder above it (the
longest such), else the one whose remote is the session's recorded remote (compared as host and
path: ``git@github.com:org/app.git`` is ``https://github.com/org/app``).

Which commit: the one the session recorded (Codex's ``session_meta.git``) when the clone has
it; otherwise the last commit committed before the session's first timestamp on the branch the
session recorded (Claude Code's ``gitBranch``), or on the clone's checked-out branch when the
session recorded none (pi, ATIF). A recorded branch that the clone lacks, or no commit by that
time, lays nothing down: the files of another branch were never the session's. Uncommitted
changes at the start are the replay's to find: what the log showed of a file before touching
it wins over the commit (``Overlay.disagreements``).

Which files: the commit's tracked files under the session's directory, so nothing ignored or
untracked and nothing of ``.git`` (the task's image makes its one synthetic commit from the
starting files alone). Of those, regular files of UTF-8 text up to ``MAX_FILE_BYTES``: symlinks
and submodules are left out (the replay has no links; a submodule is another repository), and
so are binaries (the replay's edits and the task's redaction work on text) and large generated
or data files; a left-out file stays unknown, as without a clone. A tree over the mining limits
on a candidate's starting files is not laid down at all: every candidate over it would drop as
``start_too_large``, where the log alone may yet make one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult

from ..mining.repair import DEFAULT_MAX_FILES, DEFAULT_MAX_START_BYTES
from .git import CloneError, Repository, TreeEntry, open_repository

MAX_FILE_BYTES = 2 * 1024 * 1024
# Reading a tree's blobs costs time; one far over the limits is refused from its listing.
_LISTING_SLACK = 4
_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_SCP = re.compile(r"^[\w.+-]+@[\w.-]+:")
_REMOTE = re.compile(r"^(?:[a-z][\w.+-]*://)?(?:[^@/]+@)?([^/:]+)(?::\d+)?[:/]+(.+)$", re.I)


def is_remote(text: str) -> bool:
    """Whether a configured project names a git remote (a URL or ``user@host:path``)."""
    return "://" in text or bool(_SCP.match(text))


def remote_id(url: str) -> str:
    """``host/path`` of a remote, however it is spelt (scheme, user, port, ``.git``, case)."""
    text = url.strip().rstrip("/")
    match = _REMOTE.match(text)
    ident = f"{match.group(1)}/{match.group(2)}" if match else text
    ident = ident.rstrip("/")
    return (ident[: -len(".git")] if ident.endswith(".git") else ident).lower()


@dataclass(frozen=True, slots=True)
class Project:
    """Where a session says it ran: its directory, start time and git state, as recorded."""

    cwd: str | None
    started_at: datetime | None
    commit: str | None = None
    branch: str | None = None
    remote: str | None = None

    @classmethod
    def recorded(
        cls, *, cwd: str | None, started_at: datetime | None, side_data: Mapping[str, Any]
    ) -> Project:
        git = side_data.get("git")
        git = git if isinstance(git, Mapping) else {}

        def text(name: str) -> str | None:
            value = git.get(name)
            return value if isinstance(value, str) and value else None

        where = posixpath.normpath(cwd) if cwd and cwd.startswith("/") else None
        return cls(where, started_at, text("commit"), text("branch"), text("remote"))


@dataclass(frozen=True, slots=True)
class Overlay:
    """What the clone gave one session: the seed, where it came from, or why there is none."""

    project: str  # the configured project that matched
    clone: str  # the local clone's path
    commit: str | None = None
    how: str = ""  # how the commit was found
    seed: Mapping[str, str] = field(default_factory=dict)  # path -> sha, in the blob store
    left_out: Mapping[str, int] = field(default_factory=dict)  # why -> how many files
    disagreements: tuple[str, ...] = ()  # seeded files the log showed otherwise
    reason: str = ""  # why nothing was laid down

    @property
    def applied(self) -> bool:
        return bool(self.seed)

    def after(self, result: ReplayResult) -> Overlay:
        """This overlay with what the replay over it found."""
        return replace(self, disagreements=tuple(result.seed_disagreements))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe provenance (no contents): the candidate's payload and the run's report."""
        return {
            "project": self.project,
            "clone": self.clone,
            "commit": self.commit,
            "how": self.how,
            "files": len(self.seed),
            "left_out": dict(self.left_out),
            "read_disagreements": len(self.disagreements),
            "disagreeing": list(self.disagreements[:20]),
            "reason": self.reason,
        }


def clone_for(clones: Mapping[str, Path], project: Project) -> tuple[str, Path, str] | None:
    """(configured project, clone, the session's folder within it) for ``project``, if any."""
    cwd = project.cwd
    if cwd:
        best: tuple[str, Path, str] | None = None
        for key, path in clones.items():
            if is_remote(key) or not (cwd == key or cwd.startswith(key.rstrip("/") + "/")):
                continue
            if best is None or len(key) > len(best[0]):
                folder = "" if cwd == key else posixpath.relpath(cwd, key)
                best = (key, path, folder)
        if best is not None:
            return best
    if project.remote:
        wanted = remote_id(project.remote)
        for key, path in clones.items():
            if is_remote(key) and remote_id(key) == wanted:
                return key, path, ""
    return None


def start_commit(repo: Repository, project: Project) -> tuple[str, str] | str:
    """(commit, how it was found), or why there is none."""
    recorded = (project.commit or "").lower()
    missing = ""
    if recorded:
        found = repo.commit(recorded) if _SHA.match(recorded) else None
        if found:
            return found, "recorded by the session"
        missing = f"the recorded commit {recorded[:12]} is not in the clone; "
    if project.started_at is None:
        return missing + "the session recorded no start time"
    if project.branch and project.branch != "HEAD":
        ref = repo.branch(project.branch)
        if ref is None:
            return missing + f"the clone has no branch {project.branch!r}"
        where = f"on {project.branch}"
    else:
        ref, where = "HEAD", "on the clone's checked-out branch (no branch recorded)"
    when = project.started_at
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    found = repo.last_commit_before(ref, int(when.timestamp()))
    stamp = when.astimezone(UTC).isoformat(timespec="seconds")
    if found is None:
        return missing + f"no commit {where} before the session started ({stamp})"
    return found, f"the last commit {where} before the session started ({stamp})"


def clone_overlay(
    clones: Mapping[str, Path],
    project: Project,
    blobs: BlobStore,
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_bytes: int = DEFAULT_MAX_START_BYTES,
) -> Overlay | None:
    """The seed ``project``'s clone gives (its files put in ``blobs``); None when no clone is
    configured for it. Never raises for the clone's sake: a failure is the overlay's reason."""
    match = clone_for(clones, project)
    if match is None:
        return None
    key, path, folder = match
    overlay = Overlay(project=key, clone=str(path))
    try:
        repo = open_repository(path)
        found = start_commit(repo, project)
        if isinstance(found, str):
            return replace(overlay, reason=found)
        commit, how = found
        overlay = replace(overlay, commit=commit, how=how)
        return _lay_down(overlay, repo, commit, folder, blobs, max_files, max_bytes)
    except CloneError as exc:
        return replace(overlay, reason=str(exc))


def _lay_down(
    overlay: Overlay,
    repo: Repository,
    commit: str,
    folder: str,
    blobs: BlobStore,
    max_files: int,
    max_bytes: int,
) -> Overlay:
    left_out: dict[str, int] = {}

    def leave(why: str) -> None:
        left_out[why] = left_out.get(why, 0) + 1

    wanted: list[TreeEntry] = []
    for entry in repo.tree(commit, folder):
        if entry.mode == "120000":
            leave("symlink")
        elif entry.mode == "160000":
            leave("submodule")
        elif not entry.regular or ".git" in entry.path.split("/"):
            leave("other")
        elif (entry.size or 0) > MAX_FILE_BYTES:
            leave("large")
        else:
            wanted.append(entry)
    listed = sum(e.size or 0 for e in wanted)
    if len(wanted) > _LISTING_SLACK * max_files or listed > _LISTING_SLACK * max_bytes:
        reason = _too_large(len(wanted), listed, max_files, max_bytes)
        return replace(overlay, left_out=left_out, reason=reason)
    texts: dict[str, bytes] = {}
    for path, data in repo.contents(wanted).items():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            leave("binary")
            continue
        texts[path] = data
    size = sum(map(len, texts.values()))
    if len(texts) > max_files or size > max_bytes:
        reason = _too_large(len(texts), size, max_files, max_bytes)
        return replace(overlay, left_out=left_out, reason=reason)
    if not texts:
        where = f"under {folder}" if folder else "in it"
        return replace(overlay, left_out=left_out, reason=f"the commit has no text files {where}")
    seed = {path: blobs.put(data) for path, data in sorted(texts.items())}
    return replace(overlay, seed=seed, left_out=left_out)


def _too_large(files: int, size: int, max_files: int, max_bytes: int) -> str:
    return (
        f"the clone's tree is over the mining limits ({files} files, {size} bytes; limits "
        f"{max_files} files, {max_bytes} bytes)"
    )
