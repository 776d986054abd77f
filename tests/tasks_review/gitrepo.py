"""Small real git repositories with dated commits, for the tests of a user's own clone."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path


class GitRepo:
    """``GitRepo(path).commit("2026-03-01T09:00:00Z", {"a.py": "x = 1\\n"})`` -> the sha."""

    def __init__(self, path: Path, branch: str = "main") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", branch)

    def git(self, *args: str, when: str | None = None) -> str:
        env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        if when:
            env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        done = subprocess.run(
            ["git", "-C", str(self.path), "-c", "user.name=T", "-c", "user.email=t@t", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def commit(self, when: str, files: Mapping[str, str | bytes | None], message: str = "") -> str:
        """Write (or, for None, delete) ``files`` and commit them at ``when``."""
        for name, content in files.items():
            target = self.path / name
            if content is None:
                self.git("rm", "-q", name)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
            self.git("add", name)
        self.git("commit", "-q", "-m", message or f"at {when}", when=when)
        return self.git("rev-parse", "HEAD")
