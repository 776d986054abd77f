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

Which commit (``start_commit``; ``Start.kind`` names the path taken, a stable code): the one the
session recorded (Codex's ``session_meta.git``) when the clone has it; otherwise the last commit
committed before the session's first timestamp on the branch the session recorded (Claude Code's
``gitBranch``), local or remote-tracking, or on the clone's checked-out branch when the session
recorded none (pi, ATIF). A recorded branch the clone lacks was, in the normal state of a clone,
merged and deleted: its merge into the default branch (origin/HEAD, else main or master) gives
its last commit, else the default branch's own history does, and ``how`` says so. Such a start
may be wrong; the replay's disagreements with it (``Overlay.disagreements``) show where, and
``Overlay.doubtful`` says when they are many. Uncommitted changes at the start are the replay's
to find: what the log showed of a file before touching it wins over the commit.

Which files: the commit's tracked files under the session's directory, so nothing ignored or
untracked and nothing of ``.git`` (the task's image makes its one synthetic commit from the
starting files alone). Of those, regular files of UTF-8 text up to ``MAX_FILE_BYTES``: symlinks
and submodules are left out (the replay has no links; a submodule is another repository), and
so are binaries (the replay's edits and the task's redaction work on text) and large generated
or data files; a left-out file stays unknown, as without a clone. A tree over the mining limits
on a candidate's starting files is cut down to the modules the session worked in (``scope``:
where its checks ran and what it changed, from the log alone), and laid down only if that fits:
every candidate over the limits would drop as ``start_too_large``, where the log alone may yet
make one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult

from ..mining.repair import DEFAULT_MAX_FILES, DEFAULT_MAX_START_BYTES
from .git import CloneError, Repository, TreeEntry, open_repository
from .scope import scope

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
    start_kind: str = ""  # how the commit was found (a StartKind), "" without one
    no_seed: str = ""  # why nothing was laid down, as a NoSeed code
    doubtful: str = ""  # a fallback start the log disagrees with: a sentence saying so
    scope: str = ""  # a tree over the limits cut down to the session's modules: which
    # Script runners' files in the folders above the session's, up to the repository's top
    # ("../mise.toml" -> sha): mise and just look upward. ``here``: the session's folder there.
    above: Mapping[str, str] = field(default_factory=dict)
    here: str = ""

    @property
    def applied(self) -> bool:
        return bool(self.seed)

    def after(self, result: ReplayResult) -> Overlay:
        """This overlay with what the replay over it found."""
        disagreements = tuple(result.seed_disagreements)
        doubtful = ""
        if self.start_kind in _GUESSED and len(disagreements) >= DOUBTFUL_DISAGREEMENTS:
            doubtful = (
                f"the log showed {len(disagreements)} of the seeded files otherwise: this start "
                "may not be the session's"
            )
        return replace(self, disagreements=disagreements, doubtful=doubtful)

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
            "start": self.start_kind,
            "no_seed": self.no_seed,
            "doubtful": self.doubtful,
            "scope": self.scope,
            "above": sorted(self.above),
        }


def seed_counts(entries: list[Mapping[str, Any]]) -> dict[str, Any]:
    """report.json's ``summary.clones`` from each matched trajectory's ``Overlay.to_dict``: how
    many matched a clone, found a start (and how), and were seeded (else why not)."""
    started = [e for e in entries if e.get("commit") or e.get("start")]
    seeded = [e for e in started if not e.get("reason")]
    by_start: dict[str, int] = {}
    for e in started:
        kind = e.get("start") or "unknown"
        by_start[kind] = by_start.get(kind, 0) + 1
    no_seed: dict[str, int] = {}
    for e in entries:
        if e.get("reason"):
            code = e.get("no_seed") or "unknown"
            no_seed[code] = no_seed.get(code, 0) + 1
    return {
        "matched": len(entries),
        "start_found": len(started),
        "seeded": len(seeded),
        "by_start": by_start,
        "no_seed": no_seed,
        "doubtful": sum(1 for e in seeded if e.get("doubtful")),
        # The names of the first report.json: seeded, and the rest.
        "overlaid": len(seeded),
        "not_overlaid": len(entries) - len(seeded),
    }


def clone_line(counts: Mapping[str, Any]) -> str:
    """``seed_counts`` as one line: "3 matched, 2 found a start (1 recorded_commit, 1
    default_branch), 2 seeded; not seeded: 1 no_start_time"."""
    by_start = ", ".join(f"{n} {kind}" for kind, n in sorted(counts["by_start"].items()))
    line = (
        f"{counts['matched']} matched, {counts['start_found']} found a start"
        + (f" ({by_start})" if by_start else "")
        + f", {counts['seeded']} seeded"
    )
    if counts.get("doubtful"):
        line += f" ({counts['doubtful']} doubtful)"
    if counts["no_seed"]:
        line += "; not seeded: " + ", ".join(
            f"{n} {code}" for code, n in sorted(counts["no_seed"].items())
        )
    return line


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


class StartKind(StrEnum):
    """How a start was found (``Start.kind`` and report.json's counts)."""

    RECORDED_COMMIT = "recorded_commit"
    RECORDED_BRANCH = "recorded_branch"
    CHECKED_OUT = "checked_out_branch"  # the session recorded no branch
    MERGED_BRANCH = "merged_branch"  # the recorded branch is gone; its merge gives its tip
    DEFAULT_BRANCH = "default_branch"  # the recorded branch is gone without a trace
    HARBOR_TASK = "harbor_task"  # a Harbor trial: its task's environment (``harbortask``)


class NoSeed(StrEnum):
    """Why a matched clone seeded nothing (``Overlay.no_seed``)."""

    NO_START_TIME = "no_start_time"
    NO_COMMIT_BEFORE = "no_commit_before_start"
    NO_BRANCH = "no_branch"
    CLONE_UNREADABLE = "clone_unreadable"
    OVER_LIMITS = "over_limits"
    NO_TEXT_FILES = "no_text_files"


# A start found by a fallback is doubtful once the log disagrees with this many seeded files.
DOUBTFUL_DISAGREEMENTS = 3
_GUESSED = (StartKind.CHECKED_OUT, StartKind.MERGED_BRANCH, StartKind.DEFAULT_BRANCH)


@dataclass(frozen=True, slots=True)
class Start:
    """The starting commit and how it was found; ``commit`` None: none, ``how`` says why."""

    commit: str | None
    how: str
    kind: str  # a StartKind, or a NoSeed when there is no commit


def start_commit(repo: Repository, project: Project) -> Start:
    """The commit the session started from, in the order the module's docstring gives."""
    recorded = (project.commit or "").lower()
    missing = ""
    if recorded:
        found = repo.commit(recorded) if _SHA.match(recorded) else None
        if found:
            return Start(found, "recorded by the session", StartKind.RECORDED_COMMIT)
        missing = f"the recorded commit {recorded[:12]} is not in the clone; "
    if project.started_at is None:
        return Start(None, missing + "the session recorded no start time", NoSeed.NO_START_TIME)
    when = project.started_at
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    epoch = int(when.timestamp())
    stamp = f"before the session started ({when.astimezone(UTC).isoformat(timespec='seconds')})"
    if project.branch and project.branch != "HEAD":
        ref = repo.branch(project.branch)
        if ref is None:
            gone = missing + f"the clone has no branch {project.branch!r}"
            return _gone_branch(repo, project.branch, epoch, stamp, gone)
        where, kind = f"on {project.branch}", StartKind.RECORDED_BRANCH
    else:
        ref, where = "HEAD", "on the clone's checked-out branch (no branch recorded)"
        kind = StartKind.CHECKED_OUT
    found = repo.last_commit_before(ref, epoch)
    if found is None:
        return Start(None, missing + f"no commit {where} {stamp}", NoSeed.NO_COMMIT_BEFORE)
    return Start(found, f"the last commit {where} {stamp}", kind)


def _gone_branch(repo: Repository, branch: str, epoch: int, stamp: str, gone: str) -> Start:
    """A start for a session whose branch the clone no longer has: from the branch's merge into
    the default branch when one names it, else from the default branch itself."""
    default = repo.default_branch()
    if default is None:
        why = f"{gone}, nor a default branch (origin/HEAD, main, master) to start from"
        return Start(None, why, NoSeed.NO_BRANCH)
    name = default.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    tip = repo.merged_tip(branch, default)
    found = repo.last_commit_before(tip, epoch) if tip else None
    if found is not None and tip is not None:
        how = (
            f"{gone}; its merge into {name} (its last commit {tip[:12]}) gives its last commit "
            f"{stamp}"
        )
        return Start(found, how, StartKind.MERGED_BRANCH)
    found = repo.last_commit_before(default, epoch)
    if found is None:
        return Start(None, f"{gone}; no commit on {name} {stamp}", NoSeed.NO_COMMIT_BEFORE)
    how = (
        f"{gone} and no merge of it into {name} names it; the last commit on {name} (the "
        f"clone's default branch) {stamp}. Where the log shows the files otherwise, the "
        "session's branch had moved on from it"
    )
    return Start(found, how, StartKind.DEFAULT_BRANCH)


def clone_overlay(
    clones: Mapping[str, Path],
    project: Project,
    blobs: BlobStore,
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_bytes: int = DEFAULT_MAX_START_BYTES,
    focus: Callable[[], Iterable[str]] | None = None,
) -> Overlay | None:
    """The seed ``project``'s clone gives (its files put in ``blobs``); None when no clone is
    configured for it. Never raises for the clone's sake: a failure is the overlay's reason.
    ``focus`` gives the paths the session worked on (relative to its folder), asked only when
    the tree is over the limits."""
    match = clone_for(clones, project)
    if match is None:
        return None
    key, path, folder = match
    overlay = Overlay(project=key, clone=str(path))
    try:
        repo = open_repository(path)
        start = start_commit(repo, project)
        if start.commit is None:
            return replace(overlay, reason=start.how, no_seed=start.kind)
        overlay = replace(overlay, commit=start.commit, how=start.how, start_kind=start.kind)
        limits = (max_files, max_bytes)
        return _lay_down(overlay, repo, start.commit, folder, blobs, limits, focus)
    except CloneError as exc:
        return replace(overlay, reason=str(exc), no_seed=NoSeed.CLONE_UNREADABLE)


def _lay_down(
    overlay: Overlay,
    repo: Repository,
    commit: str,
    folder: str,
    blobs: BlobStore,
    limits: tuple[int, int],
    focus: Callable[[], Iterable[str]] | None,
) -> Overlay:
    max_files, max_bytes = limits
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
    if focus is not None and (len(wanted) > max_files or listed > max_bytes):
        scoped = scope(wanted, focus())
        if scoped is not None:
            overlay = replace(overlay, scope=scoped.describe(len(wanted)))
            wanted = scoped.entries
            listed = sum(e.size or 0 for e in wanted)
    if len(wanted) > _LISTING_SLACK * max_files or listed > _LISTING_SLACK * max_bytes:
        reason = _too_large(len(wanted), listed, max_files, max_bytes, overlay.scope)
        return replace(overlay, left_out=left_out, reason=reason, no_seed=NoSeed.OVER_LIMITS)
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
        reason = _too_large(len(texts), size, max_files, max_bytes, overlay.scope)
        return replace(overlay, left_out=left_out, reason=reason, no_seed=NoSeed.OVER_LIMITS)
    if not texts:
        where = f"under {folder}" if folder else "in it"
        reason = f"the commit has no text files {where}"
        return replace(overlay, left_out=left_out, reason=reason, no_seed=NoSeed.NO_TEXT_FILES)
    seed = {path: blobs.put(data) for path, data in sorted(texts.items())}
    here = "/".join(p for p in (repo.prefix.strip("/"), folder.strip("/")) if p)
    above = _above(repo, commit, here, blobs)
    return replace(overlay, seed=seed, left_out=left_out, above=above, here=here)


# Files of the folders above the session's that a runner there reads (mise and just look up).
ABOVE_NAMES = frozenset(
    {"mise.toml", ".mise.toml", "mise.local.toml", "justfile", "Justfile", ".justfile"}
)


def _above(repo: Repository, commit: str, here: str, blobs: BlobStore) -> dict[str, str]:
    """``ABOVE_NAMES`` files of each folder above ``here`` (the session's, from the top)."""
    if not here:
        return {}
    parts = here.split("/")
    wanted = [
        entry
        for depth in range(len(parts))
        for entry in repo.files_in(commit, "/".join(parts[:depth]))
        if entry.regular
        and posixpath.basename(entry.path) in ABOVE_NAMES
        and (entry.size or 0) <= MAX_FILE_BYTES
    ]
    found = {}
    for path, data in repo.contents(wanted).items():
        found[posixpath.relpath(path, here)] = blobs.put(data)
    return found


def _too_large(files: int, size: int, max_files: int, max_bytes: int, scoped: str) -> str:
    return (
        f"the clone's tree{', ' + scoped + ',' if scoped else ''} is over the mining limits "
        f"({files} files, {size} bytes; limits {max_files} files, {max_bytes} bytes)"
    )
