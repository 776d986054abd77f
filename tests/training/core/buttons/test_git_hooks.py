"""The git buttons, in real repositories: force pushes and test tampering refused by git itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from training.core.buttons import git_hooks
from training.core.catalogue import catalogue
from training.core.facts import TaskContext


class Repo:
    """A clone with a local bare remote; every git call sees only the python3 given."""

    def __init__(self, root: Path, python3: str) -> None:
        self.root = root
        self.work = root / "work"
        bin_dir = root / "bin"
        bin_dir.mkdir()
        (bin_dir / "python3").symlink_to(python3)
        self.env = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Ada",
            "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada",
            "GIT_COMMITTER_EMAIL": "ada@example.com",
        }
        self.git("init", "-q", "--bare", "-b", "main", str(root / "remote.git"), cwd=root)
        self.git("init", "-q", "-b", "main", str(self.work), cwd=root)
        self.git("remote", "add", "origin", str(root / "remote.git"))
        self.write("src/parser.py", "def parse(s):\n    return s\n")
        self.write("tests/test_parser.py", "def test_parse():\n    assert True\n")
        self.commit("start")
        self.git("push", "-q", "origin", "main")

    def git(self, *args: str, cwd: Path | None = None, check: bool = True):
        return subprocess.run(
            ["git", *args],
            cwd=cwd or self.work,
            env=self.env,
            capture_output=True,
            text=True,
            check=check,
        )

    def write(self, path: str, text: str) -> None:
        (self.work / path).parent.mkdir(parents=True, exist_ok=True)
        (self.work / path).write_text(text)

    def commit(self, message: str, *paths: str, check: bool = True):
        self.git("add", "-A", *paths)
        return self.git("commit", "-q", "-m", message, check=check)

    def remote_head(self) -> str:
        return self.git("rev-parse", "main", cwd=self.root / "remote.git").stdout.strip()


@pytest.fixture
def repo(tmp_path, python3) -> Repo:
    return Repo(tmp_path, python3)


def installed(repo: Repo, slug: str, name: str, context: TaskContext | None = None) -> Path:
    (hook,) = [h for h in git_hooks(catalogue()[slug], context=context) if h.name == name]
    return hook.install(repo.work)


def test_git_gets_a_hook_only_for_what_git_can_see():
    hooks = {slug: [h.name for h in git_hooks(spec)] for slug, spec in catalogue().items()}
    assert hooks == {
        "failing-test-repair": ["pre-commit"],
        "focused-check-before-finishing": [],
        "no-test-tampering": ["pre-commit"],
        "read-before-edit": [],
        "safe-dependency-update": ["pre-commit", "pre-push"],
        "stop-when-credentials-missing": [],
    }


def test_the_hooks_install_where_git_runs_them(repo):
    path = installed(repo, "safe-dependency-update", "pre-push")
    assert path == repo.work / ".git" / "hooks" / "pre-push"
    assert path.stat().st_mode & 0o111
    assert path.read_text().startswith("#!/bin/sh\n")


def test_a_force_push_that_rewrites_the_remote_is_refused_and_a_normal_push_passes(repo):
    installed(repo, "safe-dependency-update", "pre-push")
    repo.write("src/parser.py", "def parse(s):\n    return s.strip()\n")
    repo.commit("strip")
    assert repo.git("push", "-q", "origin", "main").returncode == 0
    pushed = repo.remote_head()
    repo.git("commit", "-q", "--amend", "-m", "strip, reworded")
    forced = repo.git("push", "--force", "origin", "main", check=False)
    assert forced.returncode != 0
    assert "Push refused by the traj2env hook: refs/heads/main -> refs/heads/main of origin" in (
        forced.stderr
    )
    assert repo.remote_head() == pushed
    leased = repo.git("push", "--force-with-lease", "origin", "+main:main", check=False)
    assert leased.returncode != 0 and repo.remote_head() == pushed


def test_a_forced_push_that_loses_nothing_new_branches_and_deletions_pass(repo):
    installed(repo, "safe-dependency-update", "pre-push")
    repo.write("README.md", "parser\n")
    repo.commit("readme")
    assert repo.git("push", "-q", "--force", "origin", "main").returncode == 0  # a fast-forward
    repo.git("switch", "-q", "-c", "feature")
    assert repo.git("push", "-q", "origin", "feature").returncode == 0
    assert repo.git("push", "-q", "origin", "--delete", "feature").returncode == 0


def test_a_commit_that_changes_the_tasks_test_file_is_refused(repo):
    context = TaskContext(test_files=("tests/test_parser.py",))
    installed(repo, "no-test-tampering", "pre-commit", context)
    repo.write("tests/test_parser.py", "def test_parse():\n    pass\n")
    repo.write("src/parser.py", "def parse(s):\n    return s.upper()\n")
    refused = repo.commit("make it pass", check=False)
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        "Commit refused by the traj2env hook for “Do not tamper with the tests”:",
        "  changed the test file tests/test_parser.py: never change, overwrite or delete the "
        "task's tests (tests/test_parser.py), or add test hooks such as conftest.py or "
        "sitecustomize.py",
        "Unstage those changes (git restore --staged PATH) and commit again.",
    ]
    assert repo.git("log", "--format=%s").stdout.split("\n")[0] == "start"
    repo.git("restore", "--staged", "tests/test_parser.py")
    repo.git("checkout", "--", "tests/test_parser.py")
    assert repo.commit("fix the parser").returncode == 0


def test_without_a_test_list_new_tests_pass_and_changes_to_existing_ones_do_not(repo):
    installed(repo, "no-test-tampering", "pre-commit")
    repo.write("tests/test_more.py", "def test_more():\n    assert 1\n")
    assert repo.commit("more tests").returncode == 0
    repo.git("mv", "tests/test_parser.py", "tests/test_old_parser.py")
    renamed = repo.commit("rename", check=False)
    assert renamed.returncode == 1
    assert "deleted the test file tests/test_parser.py" in renamed.stderr
    repo.git("reset", "-q", "--hard")
    repo.write("tests/conftest.py", "collect_ignore = ['test_parser.py']\n")
    hooked = repo.commit("skip it", check=False)
    assert hooked.returncode == 1 and "wrote the test hook tests/conftest.py" in hooked.stderr
