"""Recipe and build-context hashes: what names an image, and what does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groundwork.core.docker.hashing import context_hash, recipe_hash

# -- hashes -------------------------------------------------------------------------------------


def test_recipe_hash_ignores_key_order_and_follows_values():
    assert recipe_hash({"a": 1, "b": [1, 2]}) == recipe_hash({"b": [1, 2], "a": 1})
    assert recipe_hash({"a": 1, "b": [1, 2]}) != recipe_hash({"a": 1, "b": [2, 1]})
    assert len(recipe_hash({})) == 16


def make_context(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "Dockerfile").write_text("FROM scratch\n")
    (root / "src" / "app.py").write_text("print(1)\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    return root


def test_context_hash_depends_on_content_not_on_location_or_timestamps(tmp_path):
    one = make_context(tmp_path / "one")
    two = make_context(tmp_path / "two")
    os.utime(two / "src" / "app.py", (1, 1))
    assert context_hash(one) == context_hash(two)


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "src" / "app.py").write_text("print(2)\n"),
        lambda root: (root / "run.sh").chmod(0o755),
        lambda root: (root / "empty").mkdir(),
        lambda root: (root / "link").symlink_to("src/app.py"),
        lambda root: (root / "src" / "app.py").rename(root / "src" / "main.py"),
    ],
    ids=["content", "exec-bit", "new-folder", "new-symlink", "rename"],
)
def test_context_hash_changes_with_any_change_that_docker_would_see(tmp_path, change):
    root = make_context(tmp_path / "ctx")
    before = context_hash(root)
    change(root)
    assert context_hash(root) != before


def test_context_hash_does_not_follow_symlinks(tmp_path):
    root = make_context(tmp_path / "ctx")
    target = tmp_path / "outside.txt"
    target.write_text("one")
    (root / "link").symlink_to(target)
    before = context_hash(root)
    target.write_text("two")  # the link is sent as a link, so its target's content is not context
    assert context_hash(root) == before
