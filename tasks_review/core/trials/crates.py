"""Rust crates for an offline image build, fetched on the host the way the user's Cargo does.

Task images are built with no network, so a Rust task carries its crates in its build context,
vendored (``cargo vendor``): each crate's sources in a folder with Cargo's own checksums, and the
source replacement that makes Cargo in the image read them instead of a registry.
``vendor_crates`` does it for the workspace a check runs in:

* **Through the user's registry**: Cargo on this host runs with the user's configuration (their
  ``$CARGO_HOME/config.toml``, copied into the cache's own Cargo home, and every ``CARGO_*``
  variable), and ``--respect-source-config`` keeps a mirror the user replaced crates.io with.
  ``registry_source`` names that source for the messages.
* **Pinned**: by the project's ``Cargo.lock`` (``--locked``: it must be up to date with the
  manifests), or, where the project has none, by the trajectory's date: ``cargo
  generate-lockfile --publish-time`` (an unstable option, enabled with ``RUSTC_BOOTSTRAP=1``),
  which takes the newest versions published before then. Index entries older than the
  registry's publication times are taken as they are; ``date_source`` says the pin was a date.
* **A cache shared between tasks**: Cargo's download cache lives in ``cache_dir/cargo-home``;
  a generated lock in ``cache_dir/locks/<key>.lock`` (keyed by the manifests, the date and the
  source), the vendored crates in ``cache_dir/vendor/<key>/`` (keyed by the lock and the
  source), made in a temporary folder and renamed into place. A warm call runs no Cargo at all.
* **Offline mode** uses that cache only (``--offline`` for what Cargo must still do).

``CratesUnavailable`` names the source and why (not configured, not reachable, a crate it does
not have), which the task writer turns into a ``dependency_unavailable_offline`` drop.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..mining.files import is_project_source
from .fetching import Fetch, Unavailable, cache_key, nearest_folder, run_tool, write_atomic

_FORMAT = "1"  # change when the cache layout or a key changes
CRATES_IO = "sparse+https://index.crates.io/"
# Where the image keeps the vendored crates; Cargo reads /.cargo/config.toml from any folder.
IMAGE_VENDOR = "/opt/traj2env/crates"
IMAGE_CONFIG = "/.cargo/config.toml"
_DIRECTORY = re.compile(r'^directory = ".*"$', re.M)


@dataclass(frozen=True, slots=True)
class VendoredCrates:
    crates: tuple[str, ...]  # "name version", sorted
    vendor_dir: Path  # the host cache's folder: one folder per crate
    config: str  # the image's /.cargo/config.toml: the source replacement, offline
    source: str  # where they came from (``registry_source``)
    resolved_before: str | None  # ISO 8601 when the pin was the trajectory's date
    date_source: str  # "Cargo.lock", or where the date came from


class CratesUnavailable(Unavailable):
    what = "Rust crates"


def needs_crates(files: Mapping[str, bytes], folder: str) -> bool:
    """Whether the workspace's manifests name a dependency that is not a path in the project."""
    for path, data in files.items():
        if posixpath.basename(path) != "Cargo.toml" or not is_project_source(path):
            continue
        try:
            manifest = tomllib.loads(data.decode("utf-8", "replace"))
        except tomllib.TOMLDecodeError:
            return True  # Cargo will say what is wrong with it; vendoring reports that
        for table in _dependency_tables(manifest):
            for spec in table.values():
                if not (isinstance(spec, dict) and "path" in spec):
                    return True
    return False


def _dependency_tables(manifest: dict) -> list[dict]:
    sections = ("dependencies", "dev-dependencies", "build-dependencies")
    tables = [manifest.get(s) for s in sections]
    for target in (manifest.get("target") or {}).values():
        if isinstance(target, dict):
            tables += [target.get(s) for s in sections]
    workspace = manifest.get("workspace") or {}
    tables.append(workspace.get("dependencies") if isinstance(workspace, dict) else None)
    return [t for t in tables if isinstance(t, dict)]


def registry_source(config: str, environ: Mapping[str, str]) -> str:
    """The registry crates.io packages come from under the user's Cargo configuration: a
    ``[source.crates-io] replace-with`` chain followed to its registry (or local folder),
    else crates.io's own index."""
    try:
        data = tomllib.loads(config) if config else {}
    except tomllib.TOMLDecodeError:
        data = {}
    found = data.get("source")
    sources: dict = found if isinstance(found, dict) else {}
    name = environ.get("CARGO_SOURCE_CRATES_IO_REPLACE_WITH") or _replace_with(sources, "crates-io")
    seen = {"crates-io"}
    while name and name not in seen:
        seen.add(name)
        env_key = "CARGO_SOURCE_" + re.sub(r"[^A-Z0-9]", "_", name.upper())
        listed = sources.get(name)
        entry: dict = listed if isinstance(listed, dict) else {}
        for key in ("registry", "local-registry", "directory"):
            value = environ.get(f"{env_key}_{key.upper().replace('-', '_')}") or entry.get(key)
            if isinstance(value, str) and value:
                return value
        name = environ.get(f"{env_key}_REPLACE_WITH") or _replace_with(sources, name)
    protocol = environ.get("CARGO_REGISTRIES_CRATES_IO_PROTOCOL") or ""
    if protocol == "git" or (not protocol and _registries_protocol(data) == "git"):
        return "https://github.com/rust-lang/crates.io-index"
    return CRATES_IO


def _replace_with(sources: dict, name: str) -> str | None:
    entry = sources.get(name)
    value = entry.get("replace-with") if isinstance(entry, dict) else None
    return value if isinstance(value, str) else None


def _registries_protocol(data: dict) -> str:
    registries = data.get("registries") if isinstance(data.get("registries"), dict) else {}
    crates_io = registries.get("crates-io") if isinstance(registries, dict) else None
    value = crates_io.get("protocol") if isinstance(crates_io, dict) else None
    return value if isinstance(value, str) else ""


def user_cargo_config(environ: Mapping[str, str]) -> str:
    """The user's own Cargo configuration (``$CARGO_HOME/config.toml``, or ``config``), or ""."""
    home = environ.get("CARGO_HOME") or os.path.join(environ.get("HOME") or "~", ".cargo")
    for name in ("config.toml", "config"):
        path = Path(os.path.expanduser(home)) / name
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    return ""


def find_cargo(environ: Mapping[str, str]) -> str | None:
    """Cargo on PATH, or in the user's Cargo home (where rustup puts it)."""
    found = shutil.which("cargo", path=environ.get("PATH"))
    if found:
        return found
    home = environ.get("CARGO_HOME") or os.path.join(environ.get("HOME") or "~", ".cargo")
    beside = Path(os.path.expanduser(home)) / "bin" / "cargo"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def vendor_crates(files: Mapping[str, bytes], workdir: str, fetch: Fetch) -> VendoredCrates | None:
    """The crates the check's workspace needs (the Cargo.toml nearest at or above ``workdir``),
    vendored in the host cache; None when it needs none (no Cargo.toml, or only path
    dependencies). CratesUnavailable when they cannot be had.
    """
    folder = nearest_folder(files, workdir, "Cargo.toml")
    if folder is None or not needs_crates(files, folder):
        return None
    return _Workspace(files, folder, fetch).vendored()


CONFIG_NAME = ".traj2env-config.toml"  # beside the crates in a vendor folder: not a crate


class _Workspace:
    """One workspace's crates: its lock (the project's, or one made by date), the cache's
    folder of them, and Cargo to fill it."""

    def __init__(self, files: Mapping[str, bytes], folder: str, fetch: Fetch) -> None:
        self.files, self.folder, self.fetch = files, folder, fetch
        self.environ = fetch.env()
        self.config = user_cargo_config(self.environ)
        self.source = registry_source(self.config, self.environ)
        self.manifests = b"".join(
            p.encode() + b"\0" + files[p] + b"\0"
            for p in sorted(files)
            if posixpath.basename(p) == "Cargo.toml" and is_project_source(p)
        )
        self.locked = _project_lock(files, folder)
        key = cache_key(_FORMAT, "lock", self.source, fetch.stamp, self.manifests)
        self.lock_cache = fetch.cache_dir / "locks" / f"{key}.lock"

    def vendored(self) -> VendoredCrates:
        if self.locked is not None:
            lock: bytes | None = self.locked
            resolved_before, date_source = None, "Cargo.lock"
        else:
            lock = self.lock_cache.read_bytes() if self.lock_cache.is_file() else None
            resolved_before = self.fetch.stamp
            date_source = f"no Cargo.lock: the newest crates published before {self.fetch.stamp}"
        folder = None if lock is None else self.folder_of(lock)
        if folder is None or not (folder / CONFIG_NAME).is_file():
            if self.fetch.offline:
                raise CratesUnavailable(
                    self.source,
                    f"offline, and the cache ({self.fetch.cache_dir}) does not hold these crates",
                )
            folder = self.vendor()
        return VendoredCrates(
            crates=tuple(sorted(_crate_name(p) for p in folder.iterdir() if p.is_dir())),
            vendor_dir=folder,
            config=(folder / CONFIG_NAME).read_text(),
            source=self.source,
            resolved_before=resolved_before,
            date_source=date_source,
        )

    def folder_of(self, lock: bytes) -> Path:
        key = cache_key(_FORMAT, "vendor", self.source, lock, self.manifests)
        return self.fetch.cache_dir / "vendor" / key

    def vendor(self) -> Path:
        """Run Cargo: the lock by date when the project has none, then ``cargo vendor``."""
        cargo = find_cargo(self.environ)
        if cargo is None:
            raise CratesUnavailable(self.source, "cargo is not installed on this machine")
        cache_dir = self.fetch.cache_dir
        home = _cargo_home(cache_dir, self.config)
        with tempfile.TemporaryDirectory(prefix=".crates-", dir=cache_dir) as scratch:
            project = Path(scratch) / "project"
            _lay_down(project, self.files)
            where = project / self.folder
            run = _Runner(cargo, where, home, self.environ, self.fetch.deadline(), self.source)
            lock = self.locked
            if lock is None:
                run("generate-lockfile", "-Zunstable-options", "--publish-time", self.fetch.stamp)
                lock = _find_lock(where, project, self.source)
                write_atomic(self.lock_cache, lock)
            out = Path(scratch) / "vendor"
            printed = run(
                "vendor", "--locked", "--versioned-dirs", "--respect-source-config", str(out)
            )
            out.mkdir(exist_ok=True)  # nothing to vendor leaves no folder
            (out / CONFIG_NAME).write_text(image_config(printed))
            final = self.folder_of(lock)
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(out, final)
            except OSError:
                if not (final / CONFIG_NAME).is_file():  # another worker's, complete: use it
                    raise
        return final


def image_config(printed: str) -> str:
    """The image's Cargo configuration: the source replacement ``cargo vendor`` printed, its
    folder moved to where the image keeps the crates, and Cargo offline."""
    start = printed.find("[source.")
    body = printed[start:] if start >= 0 else ""
    body = _DIRECTORY.sub(f'directory = "{IMAGE_VENDOR}"', body).strip()
    return (
        "# Written by traj2env: this task's crates are vendored in the image, nothing is "
        "fetched.\n[net]\noffline = true\n\n" + (body + "\n" if body else "")
    )


class _Runner:
    def __init__(
        self,
        cargo: str,
        cwd: Path,
        home: Path,
        environ: Mapping[str, str],
        deadline: float,
        source: str,
    ) -> None:
        self.cargo, self.cwd, self.deadline, self.source = cargo, cwd, deadline, source
        self.env = {**environ, "CARGO_HOME": str(home), "RUSTC_BOOTSTRAP": "1"}
        self.env.pop("CARGO_TARGET_DIR", None)

    def __call__(self, *args: str) -> str:
        argv = [self.cargo, *args, "--color", "never"]
        ok, out, err = run_tool(argv, cwd=str(self.cwd), deadline=self.deadline, env=self.env)
        if not ok:
            raise CratesUnavailable(self.source, f"cargo {args[0]} failed: {cargo_error(err)}")
        return out


def cargo_error(stderr: str) -> str:
    """Cargo's error in a line: the ``error:`` line and the causes under it."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith("error")), None)
    if start is None:
        return lines[-1] if lines else "failed with no output"
    kept = [lines[start].removeprefix("error: ")]
    for line in lines[start + 1 :]:
        if line.startswith(("note:", "help:", "warning:")):
            break
        kept.append(line.removeprefix("Caused by:").strip() or "")
    text = " ".join(part for part in kept if part)
    return text[:600]


def _project_lock(files: Mapping[str, bytes], folder: str) -> bytes | None:
    """The Cargo.lock at or above the manifest's folder (a workspace's is at its root)."""
    found = nearest_folder(files, folder, "Cargo.lock")
    return None if found is None else files["Cargo.lock" if found == "." else f"{found}/Cargo.lock"]


def _find_lock(where: Path, project: Path, source: str) -> bytes:
    folder = where
    while True:
        if (folder / "Cargo.lock").is_file():
            return (folder / "Cargo.lock").read_bytes()
        if folder == project:
            raise CratesUnavailable(source, "cargo generate-lockfile wrote no Cargo.lock")
        folder = folder.parent


def _cargo_home(cache_dir: Path, config: str) -> Path:
    """The cache's Cargo home: its download cache shared between tasks, the user's
    configuration copied in (their registries and source replacements; never credentials)."""
    home = cache_dir / "cargo-home"
    home.mkdir(parents=True, exist_ok=True)
    target = home / "config.toml"
    if not target.is_file() or target.read_text() != config:
        write_atomic(target, config.encode())
    return home


def _lay_down(root: Path, files: Mapping[str, bytes]) -> None:
    """The project's sources (Cargo reads every manifest and looks for the targets' files)."""
    for rel, data in files.items():
        if not is_project_source(rel) or rel.startswith("/") or ".." in rel.split("/"):
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    root.mkdir(parents=True, exist_ok=True)


def _crate_name(folder: Path) -> str:
    """``itoa-1.0.10`` as ``itoa 1.0.10`` (versioned folders: the version follows the last
    hyphen that starts a digit)."""
    match = re.match(r"^(.*?)-(\d+\.\d+\.\d+.*)$", folder.name)
    return f"{match.group(1)} {match.group(2)}" if match else folder.name
