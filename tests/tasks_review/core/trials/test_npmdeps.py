"""npm packages fetched on the host through the registry the user's npm configuration names,
dated by ``--before`` where the project has no lock, kept as npm's own cache of exactly them;
a registry that cannot be reached is named in the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime

import pytest

from tasks_review.core.trials.deps import OfflineSources, declared_dependencies, unavailable
from tasks_review.core.trials.fetching import Fetch
from tasks_review.core.trials.npmdeps import (
    NpmUnavailable,
    fetch_npm_packages,
    locked_packages,
    registry_packages,
)

from .registries import npm_registry

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

BEFORE = datetime(2026, 1, 1, tzinfo=UTC)
LEFTPAD = {
    "1.0.0": (datetime(2025, 3, 1, tzinfo=UTC), "module.exports = (s, n) => s.padStart(n);\n"),
    "1.1.0": (datetime(2026, 6, 1, tzinfo=UTC), "module.exports = () => 'too new';\n"),
}
PACKAGE_JSON = json.dumps(
    {"name": "app", "version": "1.0.0", "dependencies": {"leftpad-x": "^1.0.0"}}
).encode()


def project(registry: str | None = None, **more: bytes) -> dict[str, bytes]:
    files = {"package.json": PACKAGE_JSON, "index.js": b"require('leftpad-x');\n", **more}
    if registry:
        files[".npmrc"] = f"registry={registry}\n".encode()
    return files


@pytest.fixture(scope="module")
def registry():
    with npm_registry({"leftpad-x": LEFTPAD}) as url:
        yield url


def test_without_a_lock_the_packages_are_those_published_before_the_trajectory(registry, tmp_path):
    got = fetch_npm_packages(project(registry), ".", Fetch(BEFORE, tmp_path))
    assert got is not None
    assert got.registry == registry  # the project's .npmrc named it
    assert got.packages == ("leftpad-x 1.0.0",)  # 1.1.0 came after the date
    assert got.resolved_before == "2026-01-01T00:00:00Z"
    assert "--before" in got.date_source
    lock = json.loads(got.lock)
    assert lock["packages"]["node_modules/leftpad-x"]["version"] == "1.0.0"
    # The cache holds that tarball and no other version: what the offline install reads.
    cached = OfflineSources(npm_cache=got.cache).npm_versions()
    assert cached == {"leftpad-x": frozenset({"1.0.0"})}
    assert unavailable(declared_dependencies(project()), OfflineSources(npm_cache=got.cache)) == []


def test_the_cached_packages_install_offline_as_the_image_build_does(registry, tmp_path):
    got = fetch_npm_packages(project(registry), ".", Fetch(BEFORE, tmp_path / "c"))
    assert got is not None
    where = tmp_path / "install"
    where.mkdir()
    (where / "package.json").write_bytes(got.package_json)
    (where / "package-lock.json").write_bytes(got.lock)
    copy = tmp_path / "copy"
    shutil.copytree(got.cache, copy)  # as it travels in the build context
    done = subprocess.run(
        ["npm", "ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"]
        + [f"--registry={got.registry}", "--cache", str(copy)],
        cwd=where,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    installed = json.loads((where / "node_modules/leftpad-x/package.json").read_text())
    assert installed["version"] == "1.0.0"


def test_a_projects_lock_pins_them_and_a_warm_call_runs_no_npm(registry, tmp_path):
    first = fetch_npm_packages(project(registry), ".", Fetch(BEFORE, tmp_path))
    assert first is not None
    locked = project(registry, **{"package-lock.json": first.lock})
    later = datetime(2027, 1, 1, tzinfo=UTC)  # the lock decides, not the date
    got = fetch_npm_packages(locked, ".", Fetch(later, tmp_path, offline=True))
    assert got is not None
    assert (got.packages, got.date_source, got.resolved_before) == (
        ("leftpad-x 1.0.0",),
        "package-lock.json",
        None,
    )
    assert got.cache == first.cache
    assert locked_packages(first.lock) == ("leftpad-x 1.0.0",)


def test_the_registry_comes_from_the_users_npm_config_and_environment(registry, tmp_path):
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "npm_config_registry": registry}
    got = fetch_npm_packages(project(), ".", Fetch(BEFORE, tmp_path / "c", environ=environ))
    assert got is not None and got.registry == registry


def test_a_registry_that_is_down_is_named_in_the_reason(tmp_path):
    down = "http://127.0.0.1:9/"
    with pytest.raises(NpmUnavailable) as caught:
        fetch_npm_packages(project(down), ".", Fetch(BEFORE, tmp_path, timeout=120))
    assert caught.value.source == down
    assert "ECONNREFUSED" in caught.value.why or "connect" in caught.value.why
    assert str(caught.value).startswith(f"npm packages from {down}: npm install failed")


def test_offline_with_an_empty_cache_says_so(tmp_path):
    with pytest.raises(NpmUnavailable, match="offline"):
        fetch_npm_packages(project(), ".", Fetch(BEFORE, tmp_path, offline=True))


def test_projects_with_only_local_packages_need_nothing(tmp_path):
    local = json.dumps({"dependencies": {"mine": "file:../mine"}}).encode()
    assert registry_packages(local) == []
    for files in ({"package.json": local}, {"index.js": b""}):
        assert fetch_npm_packages(files, ".", Fetch(BEFORE, tmp_path)) is None
