"""A task's ``environment/``: its Dockerfile, and the dependencies the build installs offline.

    environment/Dockerfile   FROM the pinned base image; dependencies; the starting files
    environment/wheels/      Python: wheels and their hash-pinned lock (trials/wheelhouse.py)
    environment/node/        npm: package.json, its lock, npm's cache of them (trials/npmdeps.py)
    environment/goproxy/     Go: a module proxy folder, pinned by go.sum (trials/gomodules.py)
    environment/crates/      Rust: vendored crates and Cargo's config, from / (trials/crates.py)

Everything is fetched on the host, the way the user's own tools fetch it, before the build;
the build itself has no network. Each ecosystem lands outside the project (Harbor's separate
verifier replaces the project folder with the agent's, and the grader removes a submitted
``node_modules`` or ``target``), owned by root and read-only to the agent and the grader:

* Python goes into ``TASK_VENV`` (``pip --no-index --require-hashes``), whose ``bin/`` is first
  on every PATH;
* npm packages into ``/opt/traj2env/node`` (``npm ci --offline`` from the cache), with
  ``/node_modules`` linked to them: Node's resolution and npm's script PATH walk up from the
  project to it;
* Go modules stay a proxy folder, ``/opt/traj2env/goproxy``, that Go reads as ``GOPROXY=file://``
  (the grader too, ``kit/running.py``), checking each against go.sum;
* crates go to ``/opt/traj2env/crates`` with ``/.cargo/config.toml`` replacing crates.io by
  them, which Cargo reads from any folder below ``/``: one ``COPY``, no ``RUN``.

On this machine's engine every build step is a container commit of several seconds, so the
base image already runs as ``agent`` in ``/app`` and the project arrives in one ``ADD``; the
steps that install (Python, npm) share one switch to root, before the project, so tasks with
the same dependencies share those layers in the builder's cache.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundwork.core.docker.base import PATH as IMAGE_PATH
from groundwork.core.docker.base import PROJECT_DIR as BASE_WORKDIR
from groundwork.core.docker.base import TASK_VENV

from .trials.crates import IMAGE_CONFIG, IMAGE_VENDOR, VendoredCrates
from .trials.gomodules import IMAGE_PROXY, GoModules
from .trials.npmdeps import IMAGE_MODULES_LINK, IMAGE_NODE, NodePackages

AGENT_USER = "agent"
WHEELS_DIR = "environment/wheels"
NODE_DIR = "environment/node"
GOPROXY_DIR = "environment/goproxy"
CRATES_DIR = "environment/crates"
REPOSITORY_TAR = "repository.tar"  # in environment/: the starting files' .git (gitrepo)


@dataclass(frozen=True, slots=True)
class PythonPackages:
    """What the image build installs into ``TASK_VENV``: a hash-pinned lock and its wheels."""

    requirements: tuple[str, ...]  # as asked for (declared by the project, or the check's runner)
    lock: str  # ``name==version --hash=sha256:...`` lines
    wheels: tuple[Path, ...]
    resolved_before: str  # ISO 8601: PyPI as it was then
    date_source: str  # where that date came from ("trajectory", or why not)


@dataclass(frozen=True, slots=True)
class TaskDependencies:
    """Everything a task's image installs besides the starting files, per ecosystem."""

    python: PythonPackages | None = None
    node: NodePackages | None = None
    go: GoModules | None = None
    crates: VendoredCrates | None = None

    def context_files(self) -> dict[str, tuple[bytes, int]]:
        """The build context's dependency files, by task-relative path, with their modes."""
        files: dict[str, tuple[bytes, int]] = {}
        if self.python is not None:
            files[f"{WHEELS_DIR}/requirements.lock"] = (self.python.lock.encode(), 0o644)
            for wheel in self.python.wheels:
                files[f"{WHEELS_DIR}/{wheel.name}"] = (wheel.read_bytes(), 0o644)
        if self.node is not None:
            files[f"{NODE_DIR}/package.json"] = (self.node.package_json, 0o644)
            files[f"{NODE_DIR}/package-lock.json"] = (self.node.lock, 0o644)
            files.update(_tree(self.node.cache / "_cacache", f"{NODE_DIR}/cache/_cacache"))
        if self.go is not None:
            for rel, path in sorted(self.go.files.items()):
                files[f"{GOPROXY_DIR}/{rel}"] = (path.read_bytes(), 0o644)
        if self.crates is not None:
            files[f"{CRATES_DIR}{IMAGE_CONFIG}"] = (self.crates.config.encode(), 0o644)
            for crate in sorted(p for p in self.crates.vendor_dir.iterdir() if p.is_dir()):
                files.update(_tree(crate, f"{CRATES_DIR}{IMAGE_VENDOR}/{crate.name}"))
        return files

    def metadata(self) -> dict[str, Any]:
        """task.toml's ``metadata.dependencies``: what the image installs, from where, as of
        when (empty when it installs nothing)."""
        data: dict[str, Any] = {}
        if self.python is not None:
            data.update(
                python=list(self.python.requirements),
                resolved_before=self.python.resolved_before,
                date_source=self.python.date_source,
                installed_into=TASK_VENV,
            )
        if self.node is not None:
            data["npm"] = {
                "packages": list(self.node.packages),
                "registry": _without_credentials(self.node.registry),
                "pinned_by": self.node.date_source,
                "installed_into": IMAGE_NODE,
            }
        if self.go is not None:
            data["go"] = {
                "modules": list(self.go.modules),
                "source": self.go.source,
                "pinned_by": "go.sum",
                "proxy": f"file://{IMAGE_PROXY}",
            }
        if self.crates is not None:
            data["rust"] = {
                "crates": list(self.crates.crates),
                "source": self.crates.source,
                "pinned_by": self.crates.date_source,
                "vendored_into": IMAGE_VENDOR,
            }
        return data


def _tree(root: Path, prefix: str) -> dict[str, tuple[bytes, int]]:
    return {
        f"{prefix}/{path.relative_to(root).as_posix()}": (path.read_bytes(), 0o644)
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def _without_credentials(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def dockerfile(
    project: str,
    base_image: str,
    dependencies: TaskDependencies,
    *,
    public_base: bool,
    has_files: bool,
) -> str:
    """The task image: its dependencies, then the starting files and their repository in one
    layer (``project``: where they go)."""
    sources = "project/ " + REPOSITORY_TAR if has_files else REPOSITORY_TAR
    installs = _python(dependencies.python) + _node(dependencies.node)
    if installs and not public_base:
        installs = ["USER root", *installs, f"USER {AGENT_USER}"]
    copies = _go(dependencies.go) + _crates(dependencies.crates)
    header = [
        "# The starting state of a repair task mined from a recorded trajectory (traj2env):",
        "# the files as they were just before the failing check (project/), in a fresh git",
        "# repository with one synthetic commit and no upstream history (repository.tar holds",
        "# its .git, made by traj2env from these very files).",
        f"FROM {base_image}",
    ]
    if public_base:
        lines = [
            *header,
            "# Base images may default to an unprivileged user; setting up needs root.",
            "USER root",
            f"RUN if ! id -u {AGENT_USER} >/dev/null 2>&1; then \\",
            f"      useradd --create-home --shell /bin/bash {AGENT_USER} 2>/dev/null \\",
            f"      || adduser -D -s /bin/sh {AGENT_USER}; \\",
            "    fi",
            *installs,
            *([f"ENV PATH={TASK_VENV}/bin:{IMAGE_PATH}"] if dependencies.python else []),
            *copies,
            f"ADD {sources} {project}/",
            f"RUN chown -R {AGENT_USER}:{AGENT_USER} {project}",
            f"WORKDIR {project}",
            f"USER {AGENT_USER}",
            "",
        ]
    else:
        lines = [
            *header,
            "# The base image (built by traj2env from Debian packages) runs as the unprivileged",
            f"# {AGENT_USER} in {BASE_WORKDIR}, with {TASK_VENV}/bin first on its PATH.",
            *installs,
            *copies,
            "# One layer: the files owned by the agent (repository.tar's entries already are).",
            f"ADD --chown={AGENT_USER}:{AGENT_USER} {sources} {project}/",
            *([f"WORKDIR {project}"] if project != BASE_WORKDIR else []),
            "",
        ]
    return "\n".join(lines)


def _python(packages: PythonPackages | None) -> list[str]:
    if packages is None:
        return []
    wheels = "/tmp/traj2env-wheels"
    pip = (
        f"{TASK_VENV}/bin/pip install --no-index --no-cache-dir --disable-pip-version-check"
        f" \\\n      --find-links {wheels} --require-hashes -r {wheels}/requirements.lock"
    )
    return [
        "# The project's Python dependencies as of the trajectory's date, from the wheels in",
        "# this build context (hash-checked, no index): nothing is fetched. Into",
        f"# {TASK_VENV}, outside the project (Harbor's verifier replaces it), and before it:",
        "# tasks with the same wheels share these layers. Installed by root and read-only to",
        "# the agent: its bin/ is first on root's PATH as well, and the grader runs the",
        "# check's interpreter and runners from it.",
        f"COPY wheels/ {wheels}/",
        f"RUN python3 -m venv {TASK_VENV} \\",
        f" && {pip} \\",
        f" && rm -rf {wheels}",
    ]


def _node(packages: NodePackages | None) -> list[str]:
    if packages is None:
        return []
    staged = "/tmp/traj2env-node"
    registry = _without_credentials(packages.registry)
    return [
        "# The project's npm packages, as its lock (or npm's --before, the trajectory's date)",
        "# pinned them, from npm's own cache in this build context: `npm ci --offline` fetches",
        f"# nothing. Into {IMAGE_NODE}, root's and outside the project; {IMAGE_MODULES_LINK}",
        "# leads there, where Node and npm's script PATH look after the project's own folders.",
        f"COPY node/ {staged}/",
        f"RUN mkdir -p {IMAGE_NODE} \\",
        f" && cp {staged}/package.json {staged}/package-lock.json {IMAGE_NODE}/ \\",
        f" && cd {IMAGE_NODE} \\",
        " && npm ci --offline --ignore-scripts --no-audit --no-fund --no-update-notifier \\",
        f"      --registry={registry} --cache {staged}/cache \\",
        f" && ln -s {IMAGE_NODE}/node_modules {IMAGE_MODULES_LINK} \\",
        f" && rm -rf {staged} /root/.npm",
    ]


def _go(modules: GoModules | None) -> list[str]:
    if modules is None:
        return []
    return [
        "# The Go modules the project's go.sum pins, fetched through the user's GOPROXY and",
        "# laid out as a module proxy folder: Go reads it as a file:// proxy (checking each",
        "# module against go.sum), with no network.",
        f"COPY goproxy/ {IMAGE_PROXY}/",
        f"ENV GOPROXY=file://{IMAGE_PROXY} GOSUMDB=off",
    ]


def _crates(crates: VendoredCrates | None) -> list[str]:
    if crates is None:
        return []
    return [
        "# The project's crates, vendored (cargo vendor) as its Cargo.lock or the trajectory's",
        f"# date pinned them, into {IMAGE_VENDOR}; {IMAGE_CONFIG} points Cargo at them,",
        "# offline, from every folder below /.",
        "COPY crates/ /",
    ]
