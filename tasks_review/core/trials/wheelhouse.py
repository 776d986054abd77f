"""Wheels and a hash-pinned lock for installing Python requirements in an offline image build.

Task images are built with no network, so a task whose project declares dependencies (or
whose check needs pytest, which the base image lacks) must carry the wheels in its build
context. ``build_wheelhouse`` resolves PEP 508 requirements as they were on the trajectory's
date for the base image (Debian bookworm: CPython 3.11, x86_64, glibc 2.36):

* **Date pin**: ``uv pip compile --exclude-newer <before>``; the index reachable here ignores
  pip's own ``--uploaded-prior-to`` (see FACTS.md), so uv resolves and pip only downloads
  exact pins.
* **Wheels only** (``--only-binary :all:``): nothing is built in the image; a requirement with
  no compatible wheel before the date is unavailable.
* **Hash-checked**: each wheel's sha256 must be one uv resolved; the lock names that one wheel
  (``name==version --hash=sha256:...``), ready for ``pip install --no-index --find-links
  <wheels> --require-hashes -r lock``.
* **A cache shared between tasks**: wheels live in ``cache_dir/<wheel filename>`` (written to
  a temporary file first, then ``os.replace``: concurrent callers never see half a file);
  the resolution is cached in ``cache_dir/locks/<key>.txt`` and pip's choice of wheel per
  package in ``cache_dir/locks/<key>.json``, keyed by the sorted requirements, the cutoff,
  the Python version and the platform, so a warm call runs no tool at all.
* **Offline mode** uses that cache only and fails when something is missing. A cached wheel
  whose bytes do not match the lock is re-downloaded online and refused offline.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from .fetching import run_tool, write_atomic

_FORMAT = 1  # bump when the cache layout or the key changes
_PYTHON_VERSION = re.compile(r"^3\.(\d+)$")
_PLATFORM = re.compile(r"^([a-z0-9_]+)-manylinux_2_(\d+)$")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")
_NAME_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class Wheelhouse:
    lock: str  # one `name==version --hash=sha256:...` line per package, sorted by name
    wheels: tuple[Path, ...]  # the wheel files (in the host cache folder), in the lock's order
    resolved_before: datetime  # the cutoff used, in UTC


class WheelhouseUnavailable(Exception):
    """The requirements cannot be turned into wheels; the message says which and why."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


@dataclass(frozen=True, slots=True)
class _Pin:
    name: NormalizedName
    version: str
    hashes: frozenset[str]


def build_wheelhouse(
    requirements: Sequence[str],
    *,
    before: datetime,
    cache_dir: Path,
    offline: bool = False,
    python_version: str = "3.11",
    platform: str = "x86_64-manylinux_2_36",
    timeout: float = 300,
) -> Wheelhouse:
    """Resolve ``requirements`` as of ``before`` into cached wheels and a hash-pinned lock.

    ``timeout`` bounds the whole call (resolution and downloads). Raises
    ``WheelhouseUnavailable`` when a requirement cannot be resolved to wheels, the index
    cannot be reached, or (offline) the cache lacks something; ``ValueError`` for a naive
    ``before`` or an unsupported ``python_version`` / ``platform``.
    """
    if before.tzinfo is None or before.utcoffset() is None:
        raise ValueError(f"before must be timezone-aware, got {before.isoformat()}")
    cutoff = before.astimezone(UTC)
    requested = _normalize(requirements)
    if not requested:
        return Wheelhouse(lock="", wheels=(), resolved_before=cutoff)
    tags = _platform_tags(python_version, platform)
    stamp = cutoff.isoformat().replace("+00:00", "Z")
    deadline = time.monotonic() + timeout
    cache_dir = Path(cache_dir)
    key = {
        "format": _FORMAT,
        "requirements": requested,
        "before": stamp,
        "python_version": python_version,
        "platform": platform,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    resolution_path = cache_dir / "locks" / f"{digest}.txt"
    choice_path = cache_dir / "locks" / f"{digest}.json"
    where = f"before {stamp} for CPython {python_version} on {platform}"

    if resolution_path.is_file():
        resolution = resolution_path.read_text()
    elif offline:
        raise WheelhouseUnavailable(
            f"{', '.join(requested)}: the resolution {where} is not in the offline cache "
            f"({resolution_path})"
        )
    else:
        resolution = _resolve(requested, stamp, python_version, platform, where, deadline)
        write_atomic(resolution_path, resolution.encode())
    pins = _parse_pins(resolution, resolution_path)

    chosen = _read_choice(choice_path)
    found: dict[NormalizedName, tuple[Path, str]] = {}
    missing: list[_Pin] = []
    for pin in pins:
        filename = chosen.get(pin.name)
        path = cache_dir / filename if filename and _matches_pin(filename, pin) else None
        sha = _sha256(path) if path is not None and path.is_file() else None
        if path is not None and sha in pin.hashes:
            found[pin.name] = (path, sha)
        elif offline:
            problem = (
                f"{path.name} does not match the lock's sha256 (not re-downloaded offline)"
                if sha is not None and path is not None
                else "its wheel is not in the offline cache"
            )
            raise WheelhouseUnavailable(f"{pin.name}=={pin.version} {where}: {problem}")
        else:
            missing.append(pin)
    if missing:
        found.update(_download(missing, cache_dir, tags, where, deadline))
        choice = dict(key, wheels={name: found[name][0].name for name in sorted(found)})
        write_atomic(choice_path, (json.dumps(choice, indent=1, sort_keys=True) + "\n").encode())

    lock = "".join(f"{p.name}=={p.version} --hash=sha256:{found[p.name][1]}\n" for p in pins)
    return Wheelhouse(
        lock=lock,
        wheels=tuple(found[p.name][0] for p in pins),
        resolved_before=cutoff,
    )


def _normalize(requirements: Sequence[str]) -> list[str]:
    """Parse, canonicalize, de-duplicate and sort; options and URLs are refused."""
    if isinstance(requirements, str):
        raise TypeError("requirements must be a sequence of strings, not one string")
    normalized: set[str] = set()
    for raw in requirements:
        text = raw.strip()
        if not text:
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            first = str(error).splitlines()[0] if str(error) else "invalid"
            raise WheelhouseUnavailable(f"{text!r}: not a PEP 508 requirement ({first})") from None
        if requirement.url:
            raise WheelhouseUnavailable(
                f"{text!r}: a direct URL requirement cannot be pinned by date or fetched offline"
            )
        requirement.name = canonicalize_name(requirement.name)
        normalized.add(str(requirement))
    return sorted(normalized)


def _platform_tags(python_version: str, platform: str) -> list[str]:
    """The pip ``download`` options selecting wheels for that interpreter and platform.

    pip does not expand ``manylinux_2_36`` to the older glibc tags it also accepts (uv's
    ``--python-platform`` does), so every tag is listed, best first, with the legacy aliases
    where packaging's ``sys_tags`` puts them.
    """
    version = _PYTHON_VERSION.match(python_version)
    if not version:
        raise ValueError(f"python_version must look like '3.11', got {python_version!r}")
    match = _PLATFORM.match(platform)
    if not match:
        raise ValueError(f"platform must look like 'x86_64-manylinux_2_36', got {platform!r}")
    arch, newest = match[1], int(match[2])
    oldest = 5 if arch in ("x86_64", "i686") else 17
    if newest < oldest:
        raise ValueError(f"platform {platform!r} is older than manylinux_2_{oldest}")
    platforms: list[str] = []
    for minor in range(newest, oldest - 1, -1):
        platforms.append(f"manylinux_2_{minor}_{arch}")
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}.get(minor)
        if legacy and (minor == 17 or arch in ("x86_64", "i686")):
            platforms.append(f"{legacy}_{arch}")
    options = ["--python-version", python_version, "--implementation", "cp"]
    options += ["--abi", f"cp3{version[1]}"]
    for tag in platforms:
        options += ["--platform", tag]
    return options


def _find_uv() -> str:
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("uv")
    if found:
        return found
    raise WheelhouseUnavailable(
        f"uv is needed to resolve requirements by date (its --exclude-newer) and was found "
        f"neither next to {sys.executable} nor on PATH"
    )


def _resolve(
    requested: list[str],
    stamp: str,
    python_version: str,
    platform: str,
    where: str,
    deadline: float,
) -> str:
    argv = [
        _find_uv(),
        "pip",
        "compile",
        "-",
        "--exclude-newer",
        stamp,
        "--python-version",
        python_version,
        "--python-platform",
        platform,
        "--only-binary",
        ":all:",
        "--generate-hashes",
        "--no-header",
        "--no-annotate",
        "--color",
        "never",
    ]
    with tempfile.TemporaryDirectory(prefix="wheelhouse-") as scratch:
        # A neutral working directory: uv would otherwise read a pyproject.toml or uv.toml
        # found in the caller's one.
        ok, stdout, stderr = run_tool(
            argv, stdin="\n".join(requested) + "\n", cwd=scratch, deadline=deadline
        )
    if not ok:
        reason = _summary(stderr or stdout)
        named = _names_in(reason)
        culprits = [r for r in requested if canonicalize_name(Requirement(r).name) in named]
        raise WheelhouseUnavailable(
            f"cannot resolve {', '.join(culprits or requested)} {where} (wheels only): {reason}"
        )
    return stdout


def _download(
    pins: list[_Pin], cache_dir: Path, tags: list[str], where: str, deadline: float
) -> dict[NormalizedName, tuple[Path, str]]:
    """Download the wheel pip chooses for each pin, check it, move it into the cache."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".download-", dir=cache_dir))
    try:
        requirements = scratch / "requirements.txt"
        requirements.write_text(
            "".join(
                f"{p.name}=={p.version}"
                + "".join(f" --hash=sha256:{h}" for h in sorted(p.hashes))
                + "\n"
                for p in pins
            )
        )
        target = scratch / "wheels"
        target.mkdir()
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        argv += tags
        argv += ["--require-hashes", "--no-input", "--progress-bar", "off", "--no-color"]
        argv += ["--disable-pip-version-check", "-d", str(target), "-r", str(requirements)]
        ok, stdout, stderr = run_tool(argv, stdin=None, cwd=str(scratch), deadline=deadline)
        who = ", ".join(f"{p.name}=={p.version}" for p in pins)
        if not ok:
            raise WheelhouseUnavailable(
                f"cannot download {who} {where} (wheels only): {_summary(stderr or stdout)}"
            )
        by_name = {p.name: p for p in pins}
        found: dict[NormalizedName, tuple[Path, str]] = {}
        for path in sorted(target.iterdir()):
            try:
                name = parse_wheel_filename(path.name)[0]
            except InvalidWheelFilename:
                raise WheelhouseUnavailable(
                    f"pip downloaded {path.name}, which is not a wheel, for {who}"
                ) from None
            pin = by_name.get(name)
            if pin is None or not _matches_pin(path.name, pin) or name in found:
                raise WheelhouseUnavailable(f"pip downloaded an unexpected {path.name} for {who}")
            sha = _sha256(path)
            if sha not in pin.hashes:
                raise WheelhouseUnavailable(
                    f"{pin.name}=={pin.version}: downloaded {path.name} has sha256 {sha}, "
                    "which is not one of the lock's hashes"
                )
            final = cache_dir / path.name
            os.replace(path, final)
            found[name] = (final, sha)
        absent = [f"{p.name}=={p.version}" for p in pins if p.name not in found]
        if absent:
            raise WheelhouseUnavailable(
                f"pip reported success but downloaded no wheel for {', '.join(absent)} {where}"
            )
        return found
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _summary(output: str) -> str:
    """One line out of a tool's error output: uv's cause of a failed resolution, otherwise
    the first error line and the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return "failed with no output"
    for start, line in enumerate(lines):
        if line.startswith("cause: Because"):
            # uv's derivation continues on indented lines ("And because ...") until a hint.
            cause = [line.removeprefix("cause: ")]
            for more in lines[start + 1 :]:
                if re.match(r"(cause|error|hint|help):", more, flags=re.IGNORECASE):
                    break
                cause.append(more)
            return " ".join(cause)
    errors = [line for line in lines if line.lower().startswith("error:")]
    last = re.sub(r"^(cause|error|hint):\s*", "", lines[-1], flags=re.IGNORECASE)
    if not errors or errors[0] == lines[-1]:
        return last
    first = re.sub(r"^error:\s*", "", errors[0], flags=re.IGNORECASE)
    return f"{first}: {last}" if first != last else last


def _names_in(text: str) -> set[str]:
    return {canonicalize_name(token.rstrip(".-_")) for token in _NAME_TOKEN.findall(text)}


def _parse_pins(resolution: str, source: Path) -> list[_Pin]:
    pins: dict[NormalizedName, _Pin] = {}
    for line in resolution.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        spec, _, options = line.partition(" --hash=")
        hashes = frozenset(_HASH.findall("--hash=" + options)) if options else frozenset()
        try:
            requirement = Requirement(spec.strip())
        except InvalidRequirement:
            raise WheelhouseUnavailable(f"unexpected line in {source}: {line[:120]}") from None
        pinned = [s.version for s in requirement.specifier if s.operator == "=="]
        if len(requirement.specifier) != 1 or len(pinned) != 1 or requirement.marker:
            raise WheelhouseUnavailable(f"not an exact pin in {source}: {line[:120]}")
        if not hashes:
            raise WheelhouseUnavailable(f"no sha256 hash for {spec.strip()} in {source}")
        name = canonicalize_name(requirement.name)
        pins[name] = _Pin(name=name, version=pinned[0], hashes=hashes)
    return [pins[name] for name in sorted(pins)]


def _read_choice(path: Path) -> dict[str, str]:
    """Which wheel file pip chose per package, as recorded by an earlier call ({} if none)."""
    try:
        wheels = json.loads(path.read_text()).get("wheels")
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(wheels, dict):
        return {}
    return {
        str(name): filename
        for name, filename in wheels.items()
        if isinstance(filename, str) and filename == Path(filename).name
    }


def _matches_pin(filename: str, pin: _Pin) -> bool:
    try:
        name, version, _, _ = parse_wheel_filename(filename)
        return name == pin.name and version == Version(pin.version)
    except (InvalidWheelFilename, InvalidVersion):
        return False


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
