"""What the host-side fetchers share (wheels, crates, Go modules, npm packages).

* ``Fetch``: how a fetcher works (the date, the cache, offline or not, the user's
  environment, a time limit), the same for every ecosystem.
* ``Unavailable``: dependencies that cannot be had, saying from which source and why; each
  ecosystem's own (``CratesUnavailable``...) names its kind of dependency.
* ``run_tool``: a tool run under a deadline, its failure a reason, never an exception.
* ``nearest_folder``: the project folder at or above a check's own that holds a manifest.
* The caches: several workers fill one cache at once, so every file is written to a
  temporary name in its folder and renamed into place (``write_atomic``); keys hash their parts
  with their lengths, so no two different lists of parts share a key (``cache_key``).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Fetch:
    """How dependencies are fetched: as of ``before`` (the trajectory's start: the pin where
    no lock pins them), into ``cache_dir``, or only from it (``offline``), under the user's
    ``environ`` (None: this process's), within ``timeout`` seconds."""

    before: datetime
    cache_dir: Path
    offline: bool = False
    environ: Mapping[str, str] | None = None
    timeout: float = 600

    def __post_init__(self) -> None:
        if self.before.tzinfo is None or self.before.utcoffset() is None:
            raise ValueError(f"before must be timezone-aware, got {self.before.isoformat()}")
        object.__setattr__(self, "cache_dir", Path(self.cache_dir))

    @property
    def stamp(self) -> str:
        """``before`` in UTC, as ``2026-03-01T10:00:00Z``."""
        return self.before.astimezone(UTC).isoformat().replace("+00:00", "Z")

    def env(self) -> dict[str, str]:
        return dict(os.environ if self.environ is None else self.environ)

    def deadline(self) -> float:
        return time.monotonic() + self.timeout


class Unavailable(Exception):
    """``what`` (Rust crates, Go modules ...) cannot be had from ``source`` (a registry or
    proxy URL, or what is missing), and ``why``."""

    what = "dependencies"

    def __init__(self, source: str, why: str) -> None:
        self.source = source
        self.why = " ".join(why.split())
        super().__init__(f"{self.what} from {source}: {self.why}")


def run_tool(
    argv: list[str],
    *,
    cwd: str,
    deadline: float,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[bool, str, str]:
    """Run a tool; returns (succeeded, stdout, stderr). A timeout or a missing program is a
    failure with its reason as stderr; nothing here raises CalledProcessError."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False, "", "timed out before this step could start"
    try:
        done = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=None if env is None else dict(env),
            timeout=remaining,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, "", f"timed out after {remaining:.0f} s"
    except OSError as error:
        return False, "", f"cannot run {argv[0]}: {error}"
    return done.returncode == 0, done.stdout, done.stderr


def nearest_folder(files: Mapping[str, bytes], workdir: str, name: str) -> str | None:
    """The folder at or above ``workdir`` (project-relative) whose ``name`` the project has
    ("." for the root), or None."""
    folder = posixpath.normpath(workdir or ".")
    while True:
        if (name if folder == "." else f"{folder}/{name}") in files:
            return folder
        if folder == ".":
            return None
        folder = posixpath.dirname(folder) or "."


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` at ``path`` (0644), whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def cache_key(*parts: str | bytes) -> str:
    """A short hex key for a cache entry made of ``parts`` (order and boundaries count)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:32]
