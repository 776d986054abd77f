"""The one module that runs git: a user's local clone, read and never written.

    repo = open_repository(Path("~/src/app").expanduser())   # CloneError if not a repository
    repo.commit("0294234")                        # the full sha, or None when the clone lacks it
    repo.branch("feat/x")                         # refs/heads/feat/x, else a remote's, else None
    repo.last_commit_before("HEAD", 1767348000)   # the branch's commit at that time, or None
    repo.default_branch()                         # refs/remotes/origin/main, or None
    repo.merged_tip("feat/x", "refs/heads/main")  # feat/x's last commit, from its merge
    entries = repo.tree("0294234…", "packages/app")   # tracked files under a folder
    repo.contents(entries)                        # {path: bytes}

Only plumbing that reads objects and refs runs (rev-parse, rev-list, for-each-ref,
symbolic-ref -q, ls-tree, cat-file): nothing touches the clone's work tree, index or config, and
no command here reads the index, so a repository's hooks or fsmonitor never run. git itself,
not a library, reads the repository: it is on every machine that has a clone (and in the base
image), and neither GitPython nor dulwich is in the lock. ``GIT_OPTIONAL_LOCKS=0`` keeps even
a reader from taking the index lock a user's own git may be holding.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_ENV = {"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
_TIMEOUT = 120  # seconds; reading a large tree's blobs is the slowest call
_DEFAULT_NAMES = ("main", "master", "trunk", "develop")
_MERGES_READ = 2000  # merge commits searched for a gone branch's merge, newest first
_MERGE_SUBJECTS = (
    re.compile(r"^Merge (?:remote-tracking )?branch '(?:origin/)?(?P<name>[^']+)'"),
    re.compile(r"^Merge pull request #\d+ from [^/\s]+/(?P<name>\S+)"),
    re.compile(r"^Merged? (?:branch )?(?P<name>\S+) into \S+$"),
)


class CloneError(Exception):
    """The clone cannot be read: not a repository, or git failed (its message included)."""


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One tracked path of a commit's tree, as ``git ls-tree --long`` lists it."""

    path: str  # relative to the folder the tree was listed under
    mode: str  # 100644, 100755 (files), 120000 (a symlink), 160000 (a submodule)
    sha: str  # the git object id
    size: int | None  # bytes; None for a submodule

    @property
    def regular(self) -> bool:
        return self.mode in ("100644", "100755")


@dataclass(frozen=True, slots=True)
class Repository:
    path: Path
    prefix: str  # the folder of the repository that ``path`` is ("" at the top or when bare)

    def commit(self, name: str) -> str | None:
        """The full sha of commit ``name`` when the clone has it."""
        if name.startswith("-"):
            return None  # recorded text, never an option
        found = self._git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", check=False)
        return found.strip() or None

    def branch(self, name: str) -> str | None:
        """The ref of branch ``name``: a local branch, else a remote-tracking one (origin's
        first), else None. ``HEAD`` is the checked-out branch."""
        if name.startswith("-"):
            return None
        if name == "HEAD":
            return "HEAD" if self.commit("HEAD") else None
        if self.commit(f"refs/heads/{name}"):
            return f"refs/heads/{name}"
        refs = self._git("for-each-ref", "--format=%(refname)", "refs/remotes").split()
        remote = sorted(
            (r for r in refs if r.count("/") >= 3 and r.split("/", 3)[3] == name),
            key=lambda r: (r.split("/")[2] != "origin", r),
        )
        return remote[0] if remote else None

    def default_branch(self) -> str | None:
        """The ref of the branch a clone's work starts from: the remote's HEAD (``origin/HEAD``),
        else the first of main, master, trunk, develop found locally or on origin."""
        head = self._git("symbolic-ref", "-q", "refs/remotes/origin/HEAD", check=False).strip()
        if head and self.commit(head):
            return head
        for name in _DEFAULT_NAMES:
            for ref in (f"refs/heads/{name}", f"refs/remotes/origin/{name}"):
                if self.commit(ref):
                    return ref
        return None

    def merged_tip(self, name: str, into: str) -> str | None:
        """The last commit of branch ``name`` as merged into ``into``: the second parent of the
        newest merge commit whose message names it ("Merge branch 'name'", "Merge pull request
        #12 from owner/name"). None when no merge says so (a squash or rebase merge)."""
        log = self._git(
            "rev-list",
            "--merges",
            f"-n{_MERGES_READ}",
            "--format=%P%x00%s",
            into,
            "--",
            check=False,
        )
        for line in log.splitlines():
            if "\0" not in line:
                continue  # rev-list's "commit <sha>" line before each formatted one
            parents, _, subject = line.partition("\0")
            shas = parents.split()
            if len(shas) >= 2 and _merged_name(subject) == name:
                return shas[1]
        return None

    def last_commit_before(self, ref: str, epoch: int) -> str | None:
        """The commit ``ref`` pointed at by ``epoch`` (its newest commit committed by then)."""
        found = self._git("rev-list", "-1", f"--before=@{epoch}", ref, "--")
        return found.strip() or None

    def tree(self, commit: str, folder: str = "") -> list[TreeEntry]:
        """Every tracked path of ``commit`` under ``folder`` (relative to the clone's own
        folder), with paths relative to ``folder``."""
        where = "/".join(p for p in (self.prefix.strip("/"), folder.strip("/")) if p)
        entries = self._ls_tree(commit, where, recursive=True)
        cut = len(where) + 1 if where else 0
        return [TreeEntry(e.path[cut:], e.mode, e.sha, e.size) for e in entries]

    def files_in(self, commit: str, folder: str) -> list[TreeEntry]:
        """The files directly in ``folder`` of ``commit``, a path from the repository's top
        ("" is the top), named by their paths from the top."""
        entries = self._ls_tree(commit, folder.strip("/"), recursive=False)
        return [e for e in entries if e.size is not None]  # blobs: a folder has no size

    def _ls_tree(self, commit: str, where: str, *, recursive: bool) -> list[TreeEntry]:
        args = ["ls-tree", *(["-r"] if recursive else []), "-z", "--long", "--full-tree", commit]
        if where:
            args += ["--", f"{where}/"]
        entries = []
        for record in self._git(*args).split("\0"):
            if not record:
                continue
            info, path = record.split("\t", 1)
            mode, _kind, sha, size = info.split()
            entries.append(TreeEntry(path, mode, sha, None if size == "-" else int(size)))
        return entries

    def contents(self, entries: Iterable[TreeEntry]) -> dict[str, bytes]:
        """The bytes of each entry, read in one ``git cat-file --batch``."""
        wanted = list(entries)
        if not wanted:
            return {}
        request = "".join(f"{e.sha}\n" for e in wanted).encode()
        out = self._run(["cat-file", "--batch"], request)
        found: dict[str, bytes] = {}
        at = 0
        for entry in wanted:
            header_end = out.index(b"\n", at)
            header = out[at:header_end].split()
            if len(header) != 3:
                raise CloneError(f"git cat-file could not read {entry.path} ({entry.sha})")
            size = int(header[2])
            found[entry.path] = out[header_end + 1 : header_end + 1 + size]
            at = header_end + 1 + size + 1  # the content, then a newline
        return found

    def _git(self, *args: str, check: bool = True) -> str:
        return self._run(list(args), None, check=check).decode("utf-8", "replace")

    def _run(self, args: list[str], stdin: bytes | None, *, check: bool = True) -> bytes:
        return _git(self.path, args, stdin, check=check)


def _merged_name(subject: str) -> str | None:
    """The branch a merge commit's subject says it merged."""
    for pattern in _MERGE_SUBJECTS:
        found = pattern.match(subject)
        if found:
            return found.group("name")
    return None


def open_repository(path: Path) -> Repository:
    """The repository at ``path`` (a work tree, a folder in one, or a bare repository)."""
    if not path.is_dir():
        raise CloneError(f"{path} is not a folder")
    out = _git(path, ["rev-parse", "--git-dir", "--show-prefix"], None).decode()
    lines = out.split("\n")
    prefix = lines[1].strip() if len(lines) > 1 else ""
    return Repository(path=path, prefix=prefix.rstrip("/"))


def _git(path: Path, args: list[str], stdin: bytes | None, *, check: bool = True) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(path), *args],
            input=stdin,
            capture_output=True,
            env={**os.environ, **_ENV},
            timeout=_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise CloneError("git is not installed; a clone needs it to be read") from None
    except subprocess.TimeoutExpired:
        raise CloneError(f"git {args[0]} in {path} took over {_TIMEOUT} s") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit status {done.returncode}"
        if "not a git repository" in detail:
            raise CloneError(f"{path} is not a git repository")
        raise CloneError(f"git {args[0]} failed in {path}: {detail}")
    return done.stdout
