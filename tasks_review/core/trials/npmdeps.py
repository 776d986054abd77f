"""npm packages for an offline image build, fetched on the host through the user's registry.

A Node task whose package.json depends on registry packages carries npm's own cache of exactly
those packages in its build context, with the package.json and its lock; the image build runs
``npm ci --offline`` from it into ``/opt/traj2env/node`` (root's, outside the project, which
the grader cleans of any ``node_modules``) and links ``/node_modules`` to what it installed:
Node's module resolution and npm's script PATH both walk up from ``/app`` to it.
``fetch_npm_packages`` prepares it for the package.json a check runs under:

* **Through the user's registry**: the host's npm answers ``npm config get registry`` in a
  folder holding the project's ``.npmrc``, so the project's, the user's (``~/.npmrc``) and the
  environment's (``npm_config_registry``) settings decide, as they do for the user.
* **Pinned**: by the project's package-lock.json (or npm-shrinkwrap.json), or, where it has
  none, by the trajectory's date: ``npm install --package-lock-only --before=<date>`` writes the
  lock npm would have written then.
* **A cache shared between tasks**: a made lock is kept in ``cache_dir/locks/<key>.json``
  (keyed by the package.json, the registry and the date); npm's cache for one lock in
  ``cache_dir/packages/<key>/`` (keyed by the lock and the registry), filled by ``npm ci
  --ignore-scripts`` into a temporary folder and renamed into place. **Offline mode** uses
  them only.

``NpmUnavailable`` names the registry and why (npm missing, the registry not reachable, a
package it does not have), which the task writer turns into ``dependency_unavailable_offline``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .fetching import Fetch, Unavailable, cache_key, nearest_folder, run_tool, write_atomic

_FORMAT = "1"  # change when the cache layout or a key changes
LOCK_NAMES = ("package-lock.json", "npm-shrinkwrap.json")
# Where the image installs the task's packages, and the link Node finds them through.
IMAGE_NODE = "/opt/traj2env/node"
IMAGE_MODULES_LINK = "/node_modules"
DEFAULT_REGISTRY = "https://registry.npmjs.org/"
_LOCAL = ("file:", "link:", "workspace:", "portal:")
_QUIET = ("--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier")


@dataclass(frozen=True, slots=True)
class NodePackages:
    folder: str  # the project folder whose package.json is installed ("." for the root)
    package_json: bytes
    lock: bytes
    cache: Path  # npm's cache (``_cacache`` inside) holding exactly the lock's packages
    registry: str
    packages: tuple[str, ...]  # "name version" of every package the lock installs, sorted
    resolved_before: str | None  # ISO 8601 when the lock was made by the trajectory's date
    date_source: str  # "package-lock.json", or where the date came from


class NpmUnavailable(Unavailable):
    what = "npm packages"


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def registry_packages(package_json: bytes) -> list[str]:
    """The dependencies a package.json takes from a registry (not ``file:`` and the like)."""
    try:
        data = json.loads(package_json)
    except ValueError:
        return []
    names = []
    for section in ("dependencies", "devDependencies", "optionalDependencies"):
        table = data.get(section) if isinstance(data, dict) else None
        for name, spec in (table if isinstance(table, dict) else {}).items():
            if not str(spec).strip().startswith(_LOCAL):
                names.append(name)
    return names


def find_npm(environ: Mapping[str, str]) -> str | None:
    return shutil.which("npm", path=environ.get("PATH"))


def fetch_npm_packages(
    files: Mapping[str, bytes], workdir: str, fetch: Fetch
) -> NodePackages | None:
    """npm's cache of what the check's package.json (the nearest at or above ``workdir``)
    installs; None when it needs nothing from a registry. NpmUnavailable when the packages
    cannot be had."""
    folder = nearest_folder(files, workdir, "package.json")
    if folder is None or not registry_packages(files[_join(folder, "package.json")]):
        return None
    return _Project(files, folder, fetch).packages()


def locked_packages(lock: bytes) -> tuple[str, ...]:
    """ "name version" of each package a lockfile (v2 or v3) installs."""
    try:
        entries = json.loads(lock).get("packages") or {}
    except (ValueError, AttributeError):
        return ()
    found = set()
    for key, entry in entries.items():
        if "node_modules/" in key and isinstance(entry, dict) and not entry.get("link"):
            name = key.rsplit("node_modules/", 1)[1]
            found.add(f"{name} {entry.get('version', '')}".strip())
    return tuple(sorted(found))


def _env_registry(environ: Mapping[str, str]) -> str:
    """Without npm to ask: the environment's registry, else npm's default."""
    for name in ("npm_config_registry", "NPM_CONFIG_REGISTRY"):
        if environ.get(name):
            return environ[name]
    return DEFAULT_REGISTRY


class _Project:
    """One package.json's packages: its registry, its lock (the project's, or one made by
    date), npm's cache of them, and npm to fill it."""

    def __init__(self, files: Mapping[str, bytes], folder: str, fetch: Fetch) -> None:
        self.folder, self.fetch = folder, fetch
        self.environ = fetch.env()
        self.deadline = fetch.deadline()
        self.npm = find_npm(self.environ)
        self.package_json = files[_join(folder, "package.json")]
        self.npmrc = files.get(_join(folder, ".npmrc"))
        self.lock = next((files[p] for n in LOCK_NAMES if (p := _join(folder, n)) in files), None)
        self.registry = self._registry() if self.npm else _env_registry(self.environ)

    def packages(self) -> NodePackages:
        stamp, cache_dir = self.fetch.stamp, self.fetch.cache_dir
        lock, resolved_before, date_source = self.lock, None, "package-lock.json"
        if lock is None:
            resolved_before, date_source = stamp, f"no package-lock.json: npm's --before={stamp}"
            lock = self._dated_lock()
        cache = cache_dir / "packages" / cache_key(_FORMAT, "packages", self.registry, lock)
        if not (cache / "_cacache").is_dir():
            if self.fetch.offline:
                raise NpmUnavailable(
                    self.registry,
                    f"offline, and the cache ({cache_dir}) does not hold these packages yet",
                )
            self._fill(lock, cache)
        return NodePackages(
            folder=self.folder,
            package_json=self.package_json,
            lock=lock,
            cache=cache,
            registry=self.registry,
            packages=locked_packages(lock),
            resolved_before=resolved_before,
            date_source=date_source,
        )

    def _registry(self) -> str:
        """The registry npm uses for the project: its .npmrc, the user's, the environment's."""
        with tempfile.TemporaryDirectory(prefix="npm-config-") as scratch:
            Path(scratch, "package.json").write_text("{}\n")
            if self.npmrc is not None:
                Path(scratch, ".npmrc").write_bytes(self.npmrc)
            out = self._run(["config", "get", "registry"], scratch, "npm")
        registry = out.strip().splitlines()[-1].strip() if out.strip() else ""
        return registry if registry.startswith(("http://", "https://")) else DEFAULT_REGISTRY

    def _dated_lock(self) -> bytes:
        """The lock ``npm install --before`` writes for the package.json, cached by key."""
        stamp, registry = self.fetch.stamp, self.registry
        key = cache_key(_FORMAT, "lock", registry, stamp, self.package_json)
        kept = self.fetch.cache_dir / "locks" / f"{key}.json"
        if kept.is_file():
            return kept.read_bytes()
        if self.fetch.offline:
            raise NpmUnavailable(registry, f"offline, and no lock made before {stamp} is cached")
        with tempfile.TemporaryDirectory(prefix="npm-lock-") as scratch:
            Path(scratch, "package.json").write_bytes(self.package_json)
            if self.npmrc is not None:
                Path(scratch, ".npmrc").write_bytes(self.npmrc)
            args = ["install", "--package-lock-only", f"--before={stamp}", f"--registry={registry}"]
            args += [*_QUIET, "--cache", str(self.fetch.cache_dir / "resolve")]
            self._run(args, scratch, registry)
            lock = Path(scratch, "package-lock.json").read_bytes()
        write_atomic(kept, lock)
        return lock

    def _fill(self, lock: bytes, cache: Path) -> None:
        """npm's cache of the lock's packages: ``npm ci`` into a throwaway folder, renamed."""
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".npm-", dir=cache.parent) as scratch:
            project = Path(scratch, "project")
            project.mkdir()
            (project / "package.json").write_bytes(self.package_json)
            (project / "package-lock.json").write_bytes(lock)
            filled = Path(scratch, "cache")
            args = ["ci", f"--registry={self.registry}", *_QUIET, "--cache", str(filled)]
            self._run(args, str(project), self.registry)
            shutil.rmtree(filled / "_cacache" / "tmp", ignore_errors=True)
            try:
                os.rename(filled, cache)
            except OSError:
                if not (cache / "_cacache").is_dir():  # another worker's, complete: use it
                    raise

    def _run(self, args: list[str], cwd: str, source: str) -> str:
        if self.npm is None:
            raise NpmUnavailable(source, "npm is not installed on this machine")
        env = {**self.environ, "npm_config_fetch_retries": "1"}
        env["npm_config_fetch_timeout"] = "60000"
        ok, out, err = run_tool([self.npm, *args], cwd=cwd, deadline=self.deadline, env=env)
        if not ok:
            raise NpmUnavailable(source, f"npm {args[0]} failed: {npm_error(err or out)}")
        return out


def npm_error(output: str) -> str:
    """npm's error in a line: its ``npm error`` (npm 10) or ``npm ERR!`` lines, minus the log
    file's whereabouts."""
    lines = []
    for line in output.splitlines():
        text = re.sub(r"^npm (error|ERR!)\s*", "", line.strip())
        if text != line.strip() and text and "complete log of this run" not in text:
            if not text.startswith("/") and "A complete log" not in text:
                lines.append(text)
    return " ".join(lines)[:600] or (output.strip().splitlines() or ["failed with no output"])[-1]
