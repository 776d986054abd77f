"""The starting state's repository, made without git: the very commit git itself makes."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tasks_review.core.gitrepo import build, repository_tar

FILES = {
    "README.md": b"# calc\n",
    "calc/__init__.py": b"",
    "calc/ops.py": b"def add(a, b):\n    return a + b\n",
    "calc-tools/run.sh": b"#!/bin/sh\n",  # sorts between "calc" and "calc/" in git's order
    "calc.cfg": b"[calc]\n",
    "docs/sp ace/\u00e9t\u00e9.txt": "\u00e9t\u00e9\n".encode(),
    "tests/test_ops.py": b"import unittest\n",
}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "traj2env",
    "GIT_AUTHOR_EMAIL": "traj2env@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "traj2env",
    "GIT_COMMITTER_EMAIL": "traj2env@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
}
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def lay_down(root: Path, files) -> None:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", f"safe.directory={root}", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
        check=True,
    )
    return done.stdout


@needs_git
def test_the_commit_is_the_one_git_makes_of_the_same_files(tmp_path):
    lay_down(tmp_path, FILES)
    git(tmp_path, "init", "-q", "--template=", ".")
    git(tmp_path, "symbolic-ref", "HEAD", "refs/heads/main")
    git(tmp_path, "add", "--all", "--force", ".")
    git(
        tmp_path,
        "-c",
        "commit.gpgsign=false",
        "commit",
        "-q",
        "--no-verify",
        "-m",
        "Starting state",
    )
    ours = build(FILES)
    assert git(tmp_path, "rev-parse", "HEAD").strip() == ours.commit
    assert git(tmp_path, "rev-parse", "HEAD^{tree}").strip() == ours.tree


@needs_git
def test_the_extracted_repository_is_sound_clean_and_agrees_with_the_files(tmp_path):
    lay_down(tmp_path, FILES)
    with tarfile.open(fileobj=io.BytesIO(repository_tar(FILES))) as tar:
        tar.extractall(tmp_path, filter="tar")
    git(tmp_path, "fsck", "--strict", "--no-dangling")
    assert git(tmp_path, "status", "--porcelain") == ""
    assert git(tmp_path, "rev-list", "--count", "HEAD") == "1\n"
    assert sorted(git(tmp_path, "ls-files", "-z").split("\0")[:-1]) == sorted(FILES)
    (tmp_path / "calc" / "ops.py").write_bytes(b"changed\n")
    assert git(tmp_path, "status", "--porcelain") == " M calc/ops.py\n"


def test_the_same_files_give_the_same_bytes_and_other_files_other_ones():
    assert repository_tar(FILES) == repository_tar(dict(reversed(FILES.items())))
    assert repository_tar(FILES) != repository_tar({**FILES, "README.md": b"# other\n"})


def test_entries_are_owned_as_asked_and_folders_come_before_their_contents():
    with tarfile.open(fileobj=io.BytesIO(repository_tar(FILES, uid=1234, gid=1235))) as tar:
        members = tar.getmembers()
    assert {(m.uid, m.gid) for m in members} == {(1234, 1235)}
    seen: set[str] = set()
    for member in members:
        assert os.path.dirname(member.name) in seen | {""}, member.name
        seen.add(member.name)
    assert {m.mode for m in members if "/objects/" in m.name and m.isfile()} == {0o444}


def test_an_empty_project_is_one_commit_of_the_empty_tree():
    assert build({}).tree == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def test_a_git_folder_inside_the_project_is_never_tracked():
    assert build({**FILES, "vendor/x/.git/config": b"[core]\n"}).tree == build(FILES).tree
