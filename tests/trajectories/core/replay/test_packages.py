"""Package managers lose the lockfile, the manifest when dependencies change, and make the
dependency folder uncertain; installs outside the project change nothing."""

from __future__ import annotations

import pytest

from .helpers import LOST, UNCERTAIN, after, bash, cc, files_of, presumed_under

KNOWN = {"a.py": "a\n"}


def test_pip_install_marks_nothing_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "pip install requests")
    assert files_of(b) == {"a.py": "a\n"}


def test_npm_install_loses_lockfile_and_node_modules_only():
    b = cc()
    b.call("Write", {"file_path": "/repo/index.js", "content": "x\n"}, "ok")
    bash(b, "npm install left-pad")
    assert files_of(b) == {
        "index.js": "x\n",
        "package-lock.json": LOST,
        "package.json": LOST,
        "node_modules/**": UNCERTAIN,
    }


@pytest.mark.parametrize(
    "command, changed",
    [
        ("npm ci", {"package-lock.json": LOST, "node_modules/**": UNCERTAIN}),
        (
            "pnpm add -D vitest",
            {"pnpm-lock.yaml": LOST, "package.json": LOST, "node_modules/**": UNCERTAIN},
        ),
        ("yarn", {"yarn.lock": LOST, "node_modules/**": UNCERTAIN}),
        (
            "bun install",
            {"bun.lockb": LOST, "bun.lock": LOST, "node_modules/**": UNCERTAIN},
        ),
        ("npm ls", {}),
        (
            "uv add requests",
            {"uv.lock": LOST, "pyproject.toml": LOST, ".venv/**": UNCERTAIN},
        ),
        ("uv lock", {"uv.lock": LOST}),
        ("uv sync", {"uv.lock": LOST, ".venv/**": UNCERTAIN}),
        ("uv venv", {".venv/**": UNCERTAIN}),
        ("uv pip install requests", {}),
        ("poetry add requests", {"poetry.lock": LOST, "pyproject.toml": LOST}),
        ("poetry lock", {"poetry.lock": LOST}),
        ("poetry show", {}),
        ("virtualenv venv", {"venv/**": UNCERTAIN}),
        ("go mod tidy", {"go.mod": LOST, "go.sum": LOST}),
        ("go get example.com/x", {"go.mod": LOST, "go.sum": LOST}),
        ("go build ./...", {}),
        ("cargo add serde", {"Cargo.lock": LOST, "Cargo.toml": LOST}),
        ("cargo build", {}),
        ("bundle install", {"Gemfile.lock": LOST}),
        (
            "composer install",
            {"composer.lock": LOST, "composer.json": LOST, "vendor/**": UNCERTAIN},
        ),
    ],
)
def test_package_managers_lose_what_they_rewrite_in_the_project(command, changed):
    assert after(command, files=KNOWN) == {**KNOWN, **changed}


@pytest.mark.parametrize(
    "command",
    [
        "npm exec foo",
        "uv build",
        "poetry publish",
        "go generate ./...",
        "go run ./cmd",
        "cargo run",
    ],
)
def test_package_manager_commands_that_run_code_make_the_directory_uncertain(command):
    assert after(command, files=KNOWN) == presumed_under(KNOWN)
