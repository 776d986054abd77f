"""What project paths are: safe or not, tests or not, dependencies or sources.

Plain string rules on root-relative POSIX paths; shared by mining (drops, the grader's test
set) and the task writer (path safety before anything touches the disk).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

# Version-control internals and installed dependencies are not project sources: the task's
# image gets a fresh git repository and installs dependencies itself, so neither is laid down.
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
DEPENDENCY_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "site-packages", "__pycache__", ".tox", ".nox"}
)
# Dependency manifests and lockfiles: a fix that only changed these was an install.
MANIFESTS = frozenset(
    {
        "requirements.txt",
        "requirements-dev.txt",
        "requirements-test.txt",
        "constraints.txt",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "Pipfile",
        "Pipfile.lock",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "bun.lock",
        "go.mod",
        "go.sum",
    }
)
_REQUIREMENTS = re.compile(r"^requirements[\w.-]*\.(txt|in)$")

_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing"})
_TEST_FILE = re.compile(
    r"^(test_.*\.py|.*_test\.py|conftest\.py|.*\.(test|spec)\.[cm]?[jt]sx?|.*_test\.go)$"
)
# Files that decide how tests run: editing one can make any check pass, so the grader puts
# back the reference's copy (and removes ones the reference does not have).
TEST_CONFIG_NAMES = frozenset({"conftest.py", "pytest.ini", "package.json"})
_TEST_CONFIG = re.compile(r"^((vitest|jest)\.config\.[cm]?[jt]s|\.mocharc\.[a-z]+)$")
# Files whose mere presence changes how Python or pytest start; never legitimate in a fix
# unless the reference has them.
STRAY_NAMES = ("conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.ini")


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a safe root-relative file path, or None when it is."""
    if not path:
        return "empty path"
    if "\x00" in path:
        return "NUL byte in path"
    if path.startswith("/"):
        return "absolute path"
    if "\\" in path:
        return "backslash in path"
    try:
        path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return "not representable as a file name"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "empty, '.' or '..' component"
    if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in parts):
        return "component longer than 255 bytes"
    if parts[0] in VCS_DIRS:
        return "version-control internals"
    return None


def is_project_source(path: str) -> bool:
    """False for VCS internals and installed dependencies (see the module constants)."""
    parts = path.split("/")
    return not (set(parts[:-1]) & (VCS_DIRS | DEPENDENCY_DIRS) or parts[0] in VCS_DIRS)


def is_manifest(path: str) -> bool:
    name = posixpath.basename(path)
    return name in MANIFESTS or bool(_REQUIREMENTS.match(name))


def is_test_file(path: str) -> bool:
    parts = path.split("/")
    return bool(_TEST_FILE.match(parts[-1])) or bool(set(parts[:-1]) & _TEST_DIRS)


def is_test_config(path: str) -> bool:
    name = posixpath.basename(path)
    return name in TEST_CONFIG_NAMES or bool(_TEST_CONFIG.match(name))


def under(path: str, directory: str) -> bool:
    """Whether ``path`` lies in ``directory`` ("." or "" is the project root)."""
    return directory in ("", ".") or path.startswith(directory.rstrip("/") + "/")


def language_of(paths: list[str]) -> str | None:
    """The language most of ``paths`` are written in, if any."""
    counts = dict.fromkeys(_EXTENSIONS, 0)
    for path in paths:
        name = posixpath.basename(path)
        language = _MANIFEST_LANGUAGES.get(name) or next(
            (lang for lang, pattern in _EXTENSIONS.items() if pattern.search(name)), None
        )
        if language is not None:
            counts[language] += 1
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] else None


def project_language(folder: str, paths: Iterable[str]) -> str | None:
    """The language of the nearest project manifest at or above ``folder`` among ``paths``
    (go.mod, package.json, pyproject.toml, Cargo.toml, mix.exs …): what a check there that
    does not say its language (an unresolved make or mise target) builds."""
    by_folder: dict[str, str] = {}
    for path in paths:
        language = _MANIFEST_LANGUAGES.get(posixpath.basename(path))
        if language is not None:
            by_folder.setdefault(posixpath.dirname(path) or ".", language)
    while True:
        if folder in by_folder:
            return by_folder[folder]
        if folder in ("", ".") or folder.startswith(".."):
            return None
        folder = posixpath.dirname(folder) or "."


_MANIFEST_LANGUAGES = {
    "go.mod": "go",
    "package.json": "node",
    "pyproject.toml": "python",
    "setup.py": "python",
    "setup.cfg": "python",
    "Cargo.toml": "rust",
    "mix.exs": "elixir",
    "Gemfile": "ruby",
    "pom.xml": "java",
    "build.gradle": "java",
    "build.gradle.kts": "java",
}
_EXTENSIONS = {
    "python": re.compile(r"\.py$"),
    "node": re.compile(r"\.[cm]?[jt]sx?$"),
    "go": re.compile(r"\.go$"),
    "rust": re.compile(r"\.rs$"),
    "elixir": re.compile(r"\.exs?$"),
}
