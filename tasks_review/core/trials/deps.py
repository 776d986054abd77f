"""Dependencies a project declares, and whether the task's offline sources provide them.

Images are built with no network, so whatever a project depends on comes from the host: the
task writer fetches it there the way the user's own tools do and puts it in the task's build
context, and the image build installs it from there, offline. One module per ecosystem:

* **Python** (``wheelhouse``): wheels resolved as PyPI was on the trajectory's date (uv's
  ``--exclude-newer``), hash-pinned, installed with ``pip --no-index`` (``environment/wheels/``).
* **Node** (``npmdeps``): through the registry the user's npm configuration names; the
  project's lock, or one made with ``npm install --package-lock-only --before=<date>``; the
  npm cache that ``npm ci`` filled travels in ``environment/node/``, and the build runs ``npm ci
  --offline`` from it.
* **Go** (``gomodules``): through the user's GOPROXY, pinned by go.sum, as a module proxy
  folder (``environment/goproxy/``) that Go in the image reads as ``GOPROXY=file://...``. A
  vendored module (``vendor/modules.txt``) or one replaced by a folder needs nothing.
* **Rust** (``crates``): ``cargo vendor`` through the user's Cargo configuration, pinned by
  Cargo.lock or the trajectory's date, the crates in ``environment/crates/``.

This module is the check before the build: it reads the manifests (requirements*.txt,
pyproject.toml, setup.cfg, setup.py, Pipfile, package.json with its package-lock.json, go.mod,
Cargo.toml) and looks each direct dependency up in what the task carries (``OfflineSources``):
wheel and sdist names, tarball keys in the npm cache's ``_cacache/index-v5``, ``.mod`` files
in the proxy folder, crate folders. A dependency none has (or a git or URL dependency) drops
the candidate with ``dependency_unavailable_offline``; local paths (``-e .``, ``file:``,
``path =``) need nothing. A missing transitive one fails the offline install at build time,
which the build reports.
"""

from __future__ import annotations

import ast
import configparser
import functools
import json
import os
import posixpath
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from ..mining.files import is_project_source
from .gomodules import escape, go_module_directives
from .npmrange import npm_satisfies
from .plan import plan_check

PYPI = "pypi"
NPM = "npm"
GO = "go"
CRATES = "crates"
_REQUIREMENTS = re.compile(r"^requirements[\w.-]*\.(txt|in)$")
# The base image's interpreter: markers are evaluated for it, not for the host's.
IMAGE_PYTHON = "3.11"
_LOCAL_NPM = ("file:", "link:", "workspace:", "portal:")
_REMOTE_NPM = re.compile(r"^(git\+|git:|github:|gitlab:|bitbucket:|https?:|[\w.-]+/[\w.-]+(#.*)?$)")
_CACHE_KEY = re.compile(r"/((?:@[^/]+/)?[^/]+)/-/[^/]+-(\d+\.\d+\.\d+[^/]*)\.tgz$")


@dataclass(frozen=True, slots=True)
class Dependency:
    ecosystem: str  # "pypi", "npm", "go" or "crates"
    name: str
    spec: str  # a PEP 440 specifier, an npm range, or a URL
    source: str  # the manifest it was declared in
    optional: bool = False

    def __str__(self) -> str:
        return f"{self.name}{' ' + self.spec if self.spec else ''} ({self.source})"


@dataclass(frozen=True, slots=True)
class OfflineSources:
    """Where dependencies come from without a network; None means there is no such source."""

    wheelhouse: Path | None = None
    npm_cache: Path | None = None
    goproxy: Path | None = None  # a Go module proxy folder
    crates: Path | None = None  # a folder of vendored crates (``name-version/``)

    @classmethod
    def of_context(cls, context: Path) -> OfflineSources:
        """What a task's build context carries (the folders ``taskfiles`` writes)."""

        def folder(*parts: str) -> Path | None:
            path = context.joinpath(*parts)
            return path if path.is_dir() else None

        return cls(
            wheelhouse=folder("wheels"),
            npm_cache=folder("node", "cache"),
            goproxy=folder("goproxy"),
            crates=folder("crates", "opt", "traj2env", "crates"),
        )

    def python_versions(self) -> Mapping[str, frozenset[Version]]:
        return _wheelhouse_index(str(self.wheelhouse)) if self.wheelhouse else {}

    def npm_versions(self) -> Mapping[str, frozenset[str]]:
        return _npm_cache_index(str(self.npm_cache)) if self.npm_cache else {}


def declared_dependencies(files: Mapping[str, bytes]) -> list[Dependency]:
    """Every dependency the project's manifests declare (outside installed dependencies)."""
    found: list[Dependency] = []
    for path in sorted(files):
        if not is_project_source(path):
            continue
        name = posixpath.basename(path)
        text = files[path].decode("utf-8", "replace")
        if _REQUIREMENTS.match(name):
            found += _requirements_txt(text, path)
        elif name == "pyproject.toml":
            found += _pyproject(text, path)
        elif name == "setup.cfg":
            found += _setup_cfg(text, path)
        elif name == "setup.py":
            found += _setup_py(text, path)
        elif name == "Pipfile":
            found += _pipfile(text, path)
        elif name == "package.json":
            lock = files.get(posixpath.join(posixpath.dirname(path), "package-lock.json"))
            found += _package_json(text, path, lock)
        elif name == "go.mod" and "testdata" not in path.split("/")[:-1]:
            found += _go_mod(text, path, files)
        elif name == "Cargo.toml":
            found += _cargo_toml(text, path)
    return list(dict.fromkeys(found))


# Programs and modules a check runs that come from PyPI under a known name. Other modules
# (the project's own, say) are never looked up on PyPI: the probe finds them or drops.
RUNNER_DISTRIBUTIONS = {
    "pytest": "pytest",
    "py.test": "pytest",
    "mypy": "mypy",
    "ruff": "ruff",
    "black": "black",
    "flake8": "flake8",
    "pylint": "pylint",
    "coverage": "coverage",
}


def python_requirements(files: Mapping[str, bytes], command: str, workdir: str) -> list[str]:
    """PEP 508 requirements the image needs: what the project declares for PyPI (required,
    not optional), then the check's own runner (pytest, ...) when the project leaves it out.

    URL and git dependencies are kept as written; the resolver then reports them unavailable.
    """
    found: list[str] = []
    names: set[str] = set()
    for dep in declared_dependencies(files):
        if dep.ecosystem != PYPI or dep.optional:
            continue
        found.append(f"{dep.name} @ {dep.spec}" if "://" in dep.spec else f"{dep.name}{dep.spec}")
        names.add(canonicalize_name(dep.name))
    for req in plan_check(command, workdir, files).requirements:
        dist = RUNNER_DISTRIBUTIONS.get(req.name)
        if dist and canonicalize_name(dist) not in names:
            found.append(dist)
            names.add(canonicalize_name(dist))
    return list(dict.fromkeys(found))


def unavailable(
    dependencies: Iterable[Dependency], sources: OfflineSources
) -> list[tuple[Dependency, str]]:
    """The required dependencies the sources cannot provide, each with why."""
    missing: list[tuple[Dependency, str]] = []
    for dep in dependencies:
        if dep.optional:
            continue
        why = _why_unavailable(dep, sources)
        if why:
            missing.append((dep, why))
    return missing


def _why_unavailable(dep: Dependency, sources: OfflineSources) -> str | None:
    if dep.ecosystem == GO:
        if dep.spec.startswith("=>"):
            return f"replaced by {dep.spec[2:].strip()}, outside the project"
        if sources.goproxy is None:
            return (
                "the task carries no Go modules: it is neither vendored (vendor/modules.txt), "
                "replaced by a folder in the project, nor fetched through a module proxy"
            )
        if not (sources.goproxy / escape(dep.name) / "@v" / f"{escape(dep.spec)}.mod").is_file():
            return "the task's module proxy folder does not have it"
        return None
    if dep.ecosystem == CRATES:
        if dep.spec.startswith("git"):
            return "a git dependency that was not vendored"
        if sources.crates is None:
            return "the task carries no vendored crates"
        if not any(_crate_folder(p.name, dep.name) for p in sources.crates.iterdir()):
            return "the task's vendored crates do not include it"
        return None
    if dep.ecosystem == PYPI:
        if "://" in dep.spec:
            return "a URL dependency cannot be fetched offline"
        if sources.wheelhouse is None:
            return "no wheelhouse is configured"
        versions = sources.python_versions().get(canonicalize_name(dep.name), frozenset())
        try:
            spec = SpecifierSet(dep.spec)
        except InvalidSpecifier:
            return f"unreadable version specifier {dep.spec!r}"
        if not any(spec.contains(v, prereleases=True) for v in versions):
            have = ", ".join(sorted(str(v) for v in versions)) or "none"
            return f"the wheelhouse has no matching version (has: {have})"
        return None
    if _REMOTE_NPM.match(dep.spec) and not re.match(r"^[\w.-]+$", dep.spec):
        return "a git or URL dependency cannot be fetched offline"
    if sources.npm_cache is None:
        return "no npm cache is configured"
    cached = sources.npm_versions().get(dep.name, frozenset())
    if not any(npm_satisfies(v, dep.spec) for v in cached):
        have = ", ".join(sorted(cached)) or "none"
        return f"the npm cache has no matching version (has: {have})"
    return None


# -- Python manifests ---------------------------------------------------------------------------


def _marker_environment() -> dict[str, str]:
    env = {key: str(value) for key, value in default_environment().items()}
    env.update(python_version=IMAGE_PYTHON, python_full_version=IMAGE_PYTHON + ".2")
    env.update(sys_platform="linux", platform_system="Linux", os_name="posix")
    return env


def _pep508(line: str, source: str, optional: bool = False) -> Dependency | None:
    try:
        req = Requirement(line)
    except InvalidRequirement:
        return Dependency(PYPI, line.strip(), "", source, optional)  # unreadable: looked up as is
    if req.marker is not None and not req.marker.evaluate(_marker_environment()):
        return None
    spec = req.url or str(req.specifier)
    return Dependency(PYPI, canonicalize_name(req.name), spec, source, optional)


def _requirements_txt(text: str, source: str) -> list[Dependency]:
    found = []
    for raw in text.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line or line.startswith("-"):
            continue  # options, -r/-c includes (read on their own), -e local paths
        if line.startswith((".", "/")) or line.startswith("file:"):
            continue  # a local path needs no source
        dep = _pep508(line, source)
        if dep is not None:
            found.append(dep)
    return found


def _pyproject(text: str, source: str) -> list[Dependency]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    found = []
    for line in (data.get("project") or {}).get("dependencies") or []:
        if isinstance(line, str) and (dep := _pep508(line, source)):
            found.append(dep)
    poetry = ((data.get("tool") or {}).get("poetry") or {}).get("dependencies") or {}
    for name, value in poetry.items():
        if name.lower() == "python":
            continue
        version = value if isinstance(value, str) else (value or {}).get("version", "")
        optional = isinstance(value, dict) and bool(value.get("optional"))
        if isinstance(value, dict) and ("path" in value or "git" in value or "url" in value):
            if "path" in value:
                continue
            found.append(Dependency(PYPI, canonicalize_name(name), "git://", source))
            continue
        found.append(
            Dependency(PYPI, canonicalize_name(name), _poetry_spec(version), source, optional)
        )
    return found


def _poetry_spec(version: str) -> str:
    """Poetry's ^ and ~ constraints as PEP 440 (what the lookup needs, not a full translation)."""
    version = version.strip()
    if version in ("", "*"):
        return ""
    match = re.match(r"^([\^~])\s*(\d+(?:\.\d+)*)$", version)
    if not match:
        return version if re.match(r"^[<>=!~]", version) else f"=={version}"
    op, base = match.groups()
    parts = [int(p) for p in base.split(".")]
    if op == "~" or len(parts) == 1:
        upper = [parts[0] + 1] if len(parts) == 1 else [parts[0], parts[1] + 1]
    else:
        first = next((i for i, p in enumerate(parts) if p), len(parts) - 1)
        upper = parts[:first] + [parts[first] + 1]
    return f">={base},<{'.'.join(map(str, upper))}"


def _setup_cfg(text: str, source: str) -> list[Dependency]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    value = parser.get("options", "install_requires", fallback="")
    return [d for line in value.splitlines() if line.strip() and (d := _pep508(line, source))]


def _setup_py(text: str, source: str) -> list[Dependency]:
    # setup.py is code: only a literal install_requires list is read, nothing is run.
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg == "install_requires" and isinstance(
                keyword.value, ast.List | ast.Tuple
            ):
                for element in keyword.value.elts:
                    if isinstance(element, ast.Constant) and isinstance(element.value, str):
                        if dep := _pep508(element.value, source):
                            found.append(dep)
    return found


def _pipfile(text: str, source: str) -> list[Dependency]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    found = []
    for section in ("packages", "dev-packages"):
        for name, value in (data.get(section) or {}).items():
            version = value if isinstance(value, str) else (value or {}).get("version", "*")
            spec = "" if version in ("*", "") else version
            found.append(Dependency(PYPI, canonicalize_name(name), spec, source))
    return found


# -- package.json -------------------------------------------------------------------------------


def _package_json(text: str, source: str, lock: bytes | None) -> list[Dependency]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    locked: dict[str, str] = {}
    if lock:
        try:
            packages = json.loads(lock).get("packages") or {}
            for key, entry in packages.items():
                if key.startswith("node_modules/") and key.count("node_modules/") == 1:
                    locked[key[len("node_modules/") :]] = str(entry.get("version", ""))
        except (ValueError, AttributeError):
            locked = {}
    found = []
    for section, optional in (
        ("dependencies", False),
        ("devDependencies", False),
        ("optionalDependencies", True),
    ):
        for name, spec in (data.get(section) or {}).items():
            spec = str(spec).strip()
            if spec.startswith(_LOCAL_NPM):
                continue
            # The lockfile's exact version is what `npm ci` would install.
            exact = locked.get(name)
            found.append(Dependency(NPM, name, exact or spec, source, optional))
    return found


# -- go.mod -------------------------------------------------------------------------------------

_GO_VERSION = re.compile(r"^go\s+(\d+(?:\.\d+){0,2})\s*$", re.M)


def _go_mod(text: str, source: str, files: Mapping[str, bytes]) -> list[Dependency]:
    """The modules ``source`` requires that would have to be downloaded: neither vendored nor
    replaced by a folder inside the project (a folder outside it is reported as such)."""
    folder = posixpath.dirname(source)
    vendored = _vendored(files.get(posixpath.join(folder, "vendor", "modules.txt")))
    local, outside = set(), {}
    requires = []
    for verb, words in go_module_directives(text):
        if verb == "require" and len(words) >= 2:
            requires.append((words[0], words[1]))
        elif verb == "replace" and "=>" in words:
            module, target = words[0], words[words.index("=>") + 1 :]
            if target and target[0].startswith(("./", "../", "/")):
                where = posixpath.normpath(posixpath.join(folder, target[0]))
                if target[0].startswith("/") or where == ".." or where.startswith("../"):
                    outside[module] = target[0]
                else:
                    local.add(module)
    found = []
    for module, version in requires:
        if module in local or module in vendored:
            continue
        spec = f"=> {outside[module]}" if module in outside else version
        found.append(Dependency(GO, module, spec, source))
    return found


def _vendored(modules_txt: bytes | None) -> set[str]:
    if modules_txt is None:
        return set()
    names = set()
    for line in modules_txt.decode("utf-8", "replace").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "#":
            names.add(words[1])
    return names


# -- Cargo.toml ---------------------------------------------------------------------------------

_CARGO_SECTIONS = ("dependencies", "dev-dependencies", "build-dependencies")


def _cargo_toml(text: str, source: str) -> list[Dependency]:
    """Registry and git dependencies of a Cargo manifest (its targets' too); path ones and
    those a workspace declares are its own business (``workspace = true`` points there)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    tables = [data.get(s) for s in _CARGO_SECTIONS]
    for target in (data.get("target") or {}).values():
        if isinstance(target, dict):
            tables += [target.get(s) for s in _CARGO_SECTIONS]
    workspace = data.get("workspace")
    if isinstance(workspace, dict):
        tables.append(workspace.get("dependencies"))
    found = []
    for table in tables:
        for name, value in (table if isinstance(table, dict) else {}).items():
            if isinstance(value, str):
                found.append(Dependency(CRATES, name, value, source))
                continue
            if not isinstance(value, dict) or "path" in value or value.get("workspace"):
                continue
            crate = str(value.get("package") or name)
            spec = f"git {value['git']}" if "git" in value else str(value.get("version", ""))
            found.append(Dependency(CRATES, crate, spec, source, bool(value.get("optional"))))
    return found


def _crate_folder(folder: str, crate: str) -> bool:
    """Whether a vendored folder (``name-1.2.3``, or ``name`` unversioned) holds ``crate``."""
    return folder == crate or bool(re.match(re.escape(crate) + r"-\d", folder))


def go_version_required(files: Mapping[str, bytes]) -> str | None:
    """The newest ``go`` line among the project's go.mod files ("1.22"), or None."""
    found = []
    for path in sorted(files):
        if posixpath.basename(path) == "go.mod" and is_project_source(path):
            match = _GO_VERSION.search(files[path].decode("utf-8", "replace"))
            if match:
                found.append(match.group(1))
    return max(found, key=lambda v: tuple(int(p) for p in v.split("."))) if found else None


# Programs that run a project's own task definitions: a Go project's `make test` needs Go.
SCRIPT_RUNNERS = frozenset({"make", "just", "task", "mise"})


def needs_go(files: Mapping[str, bytes], command: str, workdir: str) -> bool:
    """Whether the check needs Go's toolchain: it runs ``go``, or runs a project script
    (make, just ...) in a project with a go.mod."""
    programs = {r.name for r in plan_check(command, workdir, files).requirements}
    if "go" in programs or "gofmt" in programs:
        return True
    has_module = any(posixpath.basename(p) == "go.mod" for p in files)
    return has_module and bool(programs & SCRIPT_RUNNERS)


# -- the sources' indexes -----------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _wheelhouse_index(folder: str) -> Mapping[str, frozenset[Version]]:
    versions: dict[str, set[Version]] = {}
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        try:
            if name.endswith(".whl"):
                project, version, _, _ = parse_wheel_filename(name)
            elif name.endswith((".tar.gz", ".zip")):
                project, version = parse_sdist_filename(name)
            else:
                continue
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        versions.setdefault(str(project), set()).add(version)
    return {k: frozenset(v) for k, v in versions.items()}


@functools.lru_cache(maxsize=8)
def _npm_cache_index(folder: str) -> Mapping[str, frozenset[str]]:
    root = Path(folder)
    index = root / "_cacache" / "index-v5"
    if not index.is_dir():
        index = root / "index-v5"
    versions: dict[str, set[str]] = {}
    for dirpath, _dirs, names in os.walk(index):
        for name in names:
            try:
                lines = (Path(dirpath) / name).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in lines:
                _, _, payload = line.partition("\t")
                try:
                    key = json.loads(payload).get("key", "")
                except (ValueError, AttributeError):
                    continue
                match = _CACHE_KEY.search(key)
                if match:
                    versions.setdefault(match.group(1), set()).add(match.group(2))
    return {k: frozenset(v) for k, v in versions.items()}
