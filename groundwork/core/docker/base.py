"""The base image every task image starts FROM, built offline from Debian packages.

``bootstrap(spec)`` makes a Debian root filesystem with mmdebstrap (python3 with venv and pip,
git, make, nodejs and npm, CA certificates; users ``agent`` 1000 and ``grader`` 1001), imports it
into Docker with labels and image config, pushes it to a loopback registry to give it a real
digest (see ``registry`` for why), and returns an ``ImageRecord`` whose ``pinned_ref`` goes in
task Dockerfiles: ``FROM 127.0.0.1:5000/traj2env/base@sha256:...``.

The image config is what a task image needs, so that a task's Dockerfile is one layer on top
(every build step costs a container commit on this engine, see ``taskfiles``): it runs as
``agent`` in ``/app`` (created, owned by the agent), with ``/opt/traj2env/venv/bin`` first on PATH
(where a task installs its Python packages; ``/opt/traj2env`` is root's and read-only to the
agent: its ``bin/`` is first on root's PATH too, and in same-container grading the grader runs
the check's interpreter and runners from it).

**Variants** add to the default recipe, each a recipe of its own, built and cached like the
default one (``BaseImageSpec(variants=(go,))``, a ``Variant`` each: packages, environment, an
entrypoint, files and customize hooks). Which variants exist is the caller's business: the task
images' own (Go, services) are ``tasks_review.core.images``.

Why mmdebstrap and not debootstrap (both are Debian packages; measured here): mmdebstrap
resolves dependencies with apt, takes several suites at once (bookworm, -updates, -security),
writes the tar Docker imports directly and runs customize hooks for the users. It built this
recipe in 38-61 s; debootstrap took 107 s and then failed to configure npm's dependency tree.
A first bootstrap here: rootfs 61 s, import 4 s, push 11 s; 434 MB tar, 405 MB image.

Idempotent by recipe: the recipe (suite, mirrors, packages, users, image config and
``RECIPE_VERSION``) hashes to the tag ``traj2env/base:<suite>-<hash>`` and the label
``traj2env.recipe``. A second call finds the image and returns at once. After a prune, the image
is pulled back from the registry's storage (same id, same digest: task Dockerfiles stay valid);
if that is gone too, the cached root filesystem tar is imported again (new id and digest);
only without that tar does mmdebstrap run. Package versions are whatever the mirror serves at
build time: for a reproducible rootfs, point ``mirror`` at a snapshot.debian.org date.

Online users may set ``public_image`` to a digest-pinned image (``debian@sha256:...``) that has
what checks need; it is pulled if missing and used as is.
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import docker_labels as lbl
from .engine import Engine, ImageInfo
from .errors import InfraError, SetupError
from .hashing import recipe_hash
from .registry import Registry, answers

RECIPE_VERSION = 2  # bump when the build steps change in a way the recipe's fields do not show
DEFAULT_PACKAGES = (
    "python3",
    "python3-venv",
    "python3-pip",
    "git",
    "make",
    "nodejs",
    "npm",
    "ca-certificates",
)
DEFAULT_USERS = (("agent", 1000), ("grader", 1001))
DEFAULT_REGISTRY = "127.0.0.1:5000"
DEFAULT_REPOSITORY = "traj2env/base"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Where task images install a project's Python dependencies (outside the project: Harbor's
# separate verifier replaces the project folder with the agent's).
TASK_VENV = "/opt/traj2env/venv"
PROJECT_DIR = "/app"  # where every task lays its project down, the base image's WORKDIR
# Documentation and translations are a seventh of the tree and no check reads them (Debian's own
# slim images drop them the same way); copyright files stay.
DPKG_EXCLUDES = (
    "/usr/share/doc/*",
    "/usr/share/man/*",
    "/usr/share/info/*",
    "/usr/share/locale/*",
    "/usr/share/lintian/*",
)
DPKG_INCLUDES = ("/usr/share/doc/*/copyright",)
MMDEBSTRAP_TIMEOUT = 1800
PINNED = re.compile(r"@sha256:[0-9a-f]{64}$")

_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+(/[a-z0-9-]+)?$")  # name, or name/suite
_SUITE = re.compile(r"^[a-z][a-z0-9-]*$")
_WORKDIR = re.compile(r"^(/[A-Za-z0-9._-]+)+$")
_MIRROR = re.compile(r"^https?://[^\s\"'$`\\]+$")
_REPOSITORY = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$")

Progress = Callable[[str], None]


def _quiet(_message: str) -> None:
    pass


@dataclass(frozen=True, slots=True)
class Variant:
    """What a base image variant adds to the default recipe; ``name`` goes in the image's tag."""

    name: str
    packages: tuple[
        str, ...
    ]  # "{backports}" stands for the suite's backports ("bookworm-backports")
    env: tuple[tuple[str, str], ...] = ()
    entrypoint: tuple[str, ...] = ()
    files: tuple[tuple[str, Path], ...] = ()  # (path in the image, file on this host), first
    # mmdebstrap customize hooks, after the users and the files ({user}, {uid}: the image's)
    hooks: tuple[str, ...] = ()
    user_hooks: tuple[str, ...] = ()  # then these, once per other user ({name}, {uid}, {user})
    last_hooks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BaseImageSpec:
    suite: str = "bookworm"
    mirror: str = "http://deb.debian.org/debian"
    # None leaves out the -updates, -security and -backports suites (for suites that have
    # none, like sid)
    security_mirror: str | None = "http://deb.debian.org/debian-security"
    packages: tuple[str, ...] = DEFAULT_PACKAGES
    users: tuple[tuple[str, int], ...] = DEFAULT_USERS
    user: str = "agent"  # the image's USER; uid 1000 by default, never root
    workdir: str = PROJECT_DIR  # created, owned by ``user``
    repository: str = DEFAULT_REPOSITORY
    registry: str = DEFAULT_REGISTRY
    cache_dir: Path = Path("var/cache")
    public_image: str | None = None
    variants: tuple[Variant, ...] = ()  # kept sorted by name, each once

    def __post_init__(self) -> None:
        # Every field below ends up in a shell hook or an image config: check, don't quote.
        if not _SUITE.match(self.suite):
            raise ValueError(f"suite {self.suite!r} is not a Debian suite name")
        for mirror in (self.mirror, self.security_mirror or self.mirror):
            if not _MIRROR.match(mirror):
                raise ValueError(f"mirror {mirror!r} must be an http(s) URL")
        bad = [p for p in self.packages if not _PACKAGE.match(p)]
        if bad or not self.packages:
            raise ValueError(f"package names not valid: {bad or 'none given'}")
        for name, uid in self.users:
            if not _NAME.match(name) or not 1000 <= uid < 60000:
                raise ValueError(f"user {name!r} uid {uid}: need a login name and a uid 1000-59999")
        if self.user not in {name for name, _ in self.users}:
            raise ValueError(f"user {self.user!r} must be one of the users created")
        if not _WORKDIR.match(self.workdir):
            raise ValueError(f"workdir {self.workdir!r} must be an absolute path")
        if not _REPOSITORY.match(self.repository):
            raise ValueError(f"repository {self.repository!r} is not a Docker repository name")
        if self.public_image is not None and not PINNED.search(self.public_image):
            raise ValueError(
                f"public_image {self.public_image!r} must be pinned: name@sha256:<digest>"
            )
        by_name = {variant.name: variant for variant in self.variants}
        if len(by_name) != len(set(self.variants)):
            raise ValueError(f"two different base image variants share a name: {sorted(by_name)}")
        object.__setattr__(self, "variants", tuple(by_name[name] for name in sorted(by_name)))

    def with_variants(self, variants: Iterable[Variant]) -> BaseImageSpec:
        """The same recipe with ``variants`` added (a public image has none: it is returned)."""
        if self.public_image:
            return self
        return dataclasses.replace(self, variants=(*self.variants, *variants))

    def all_packages(self) -> list[str]:
        backports = f"{self.suite}-backports"
        extra = [p for v in self.variants for p in v.packages]
        if not self.security_mirror:  # no backports suite: the suite's own packages
            extra = [p.replace("/{backports}", "") for p in extra]
        return list(
            dict.fromkeys([*self.packages, *(p.format(backports=backports) for p in extra)])
        )

    def recipe(self) -> dict[str, Any]:
        """What decides the image's content; where it is stored and cached does not."""
        return {
            "version": RECIPE_VERSION,
            "suite": self.suite,
            "sources": self.sources(),
            "packages": sorted(self.all_packages()),
            "users": [list(u) for u in self.users],
            "dpkg": [list(DPKG_EXCLUDES), list(DPKG_INCLUDES)],
            "hooks": self.hooks(),
            "changes": self.changes(with_labels=False),
        }

    @property
    def recipe_hash(self) -> str:
        return _recipe_hash(self)

    @property
    def tag(self) -> str:
        return "-".join([self.suite, *(v.name for v in self.variants), self.recipe_hash])

    def sources(self) -> list[str]:
        lines = [f"deb {self.mirror} {self.suite} main"]
        if self.security_mirror:
            lines += [
                f"deb {self.mirror} {self.suite}-updates main",
                f"deb {self.security_mirror} {self.suite}-security main",
            ]
            if any("{backports}" in p for v in self.variants for p in v.packages):
                lines.append(f"deb {self.mirror} {self.suite}-backports main")
        return lines

    def hooks(self, *, host_paths: bool = False) -> list[str]:
        """mmdebstrap customize hooks (shell on the host; ``$1`` is the root filesystem), and
        ``upload`` commands for the files a variant brings (by content unless ``host_paths``)."""
        hooks = [
            f'chroot "$1" useradd --uid {uid} --user-group --create-home --shell /bin/bash {name}'
            for name, uid in self.users
        ]
        owner = f"{self.user}:{self.user}"
        hooks.append(f'mkdir -p "$1{self.workdir}" && chroot "$1" chown {owner} {self.workdir}')
        # Root's, not the agent's: its bin/ is first on every PATH, root's too (test.sh, and
        # the `bash` Harbor starts it with, in same-container grading).
        hooks.append(f'mkdir -p "$1{TASK_VENV.rsplit("/", 1)[0]}"')
        for variant in self.variants:
            for inside, outside in variant.files:
                # The recipe names a file by its content: where this checkout lives must not
                # change the image's hash.
                source = (
                    str(outside) if host_paths else hashlib.sha256(outside.read_bytes()).hexdigest()
                )
                hooks.append(f'mkdir -p "$1{posixpath.dirname(inside)}"')
                hooks.append(f"upload {shlex.quote(source)} {inside}")
                hooks.append(f'chmod 0644 "$1{inside}"')
            users = dict(self.users)
            hooks += [_fill(h, user=self.user, uid=users[self.user]) for h in variant.hooks]
            for name, uid in self.users:
                if name != self.user:
                    hooks += [
                        _fill(h, name=name, uid=uid, user=self.user) for h in variant.user_hooks
                    ]
            hooks += variant.last_hooks
        return hooks

    def changes(self, *, with_labels: bool = True) -> list[str]:
        """``docker import --change`` lines: the image config a Dockerfile would set."""
        lines = [
            f"ENV PATH={TASK_VENV}/bin:{PATH}",
            "ENV LANG=C.UTF-8",
            *(f"ENV {k}={v}" for variant in self.variants for k, v in variant.env),
            f"WORKDIR {self.workdir}",
            f"USER {self.user}",
            *(
                f"ENTRYPOINT {json.dumps(list(v.entrypoint))}"
                for v in self.variants
                if v.entrypoint
            ),
            'CMD ["/bin/bash"]',
        ]
        if with_labels:
            lines += [f"LABEL {lbl.RECIPE}={self.recipe_hash}", f"LABEL {lbl.KIND}={lbl.KIND_BASE}"]
        return lines


@functools.lru_cache(maxsize=64)
def _recipe_hash(spec: BaseImageSpec) -> str:
    # Once per process: a variant's files are read for the recipe, and a file edited while a
    # bootstrap runs must not give its image one name at the start and another at the end.
    return recipe_hash(spec.recipe())


def _fill(hook: str, **values: object) -> str:
    # Not str.format: hooks are shell, with braces of their own (${bin#...}).
    for key, value in values.items():
        hook = hook.replace("{" + key + "}", str(value))
    return hook


@dataclass(frozen=True, slots=True)
class ImageRecord:
    kind: str  # "base" or "public"
    tag: str
    image_id: str  # the engine's id, sha256:...
    pinned_ref: str  # for FROM: name@sha256:<digest>
    recipe: str | None
    source: str  # engine (already there), registry, tarball, mmdebstrap, public
    size_bytes: int
    rootfs_bytes: int | None = None
    seconds: float = 0.0
    steps: Mapping[str, float] = field(default_factory=dict)

    @property
    def built(self) -> bool:
        return self.source in ("tarball", "mmdebstrap")

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tag": self.tag,
            "image_id": self.image_id,
            "pinned_ref": self.pinned_ref,
            "recipe": self.recipe,
            "source": self.source,
            "built": self.built,
            "size_bytes": self.size_bytes,
            "rootfs_bytes": self.rootfs_bytes,
            "seconds": round(self.seconds, 2),
            "steps": {k: round(v, 2) for k, v in self.steps.items()},
        }


def mmdebstrap_command(spec: BaseImageSpec, output: Path, program: str = "mmdebstrap") -> list[str]:
    return [
        program,
        "--variant=minbase",
        "--format=tar",
        "--include=" + ",".join(spec.all_packages()),
        '--aptopt=APT::Install-Recommends "false"',
        *(f"--dpkgopt=path-exclude={p}" for p in DPKG_EXCLUDES),
        *(f"--dpkgopt=path-include={p}" for p in DPKG_INCLUDES),
        *(f"--customize-hook={hook}" for hook in spec.hooks(host_paths=True)),
        spec.suite,
        str(output),
        *spec.sources(),
    ]


def ensure_tool(names: Sequence[str], package: str, progress: Progress = _quiet) -> str:
    """The path of the first of ``names`` on PATH, installing Debian ``package`` as root if none."""
    for name in names:
        if found := shutil.which(name):
            return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SetupError(
            f"{names[0]} is not installed and this process cannot install it "
            f"(needs root and apt-get): run `sudo apt-get install {package}`"
        )
    progress(f"installing {package} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if done.returncode:
            raise SetupError(f"`{' '.join(cmd)}` failed: {done.stderr.strip()[-2000:]}")
    for name in names:
        if found := shutil.which(name):
            return found
    raise SetupError(f"installed {package} but found none of {', '.join(names)} on PATH")


@contextmanager
def _turn(path: Path, ready: Callable[[], ImageRecord | None]) -> Iterator[ImageRecord | None]:
    """The lock on ``path`` (yields None), or what ``ready`` finds first (yields it, the lock
    not taken). Two processes bootstrapping at once would both run mmdebstrap and fight over
    the registry, so one builds at a time; but one process may build several recipes in a
    row (the default, then each variant), and a waiter whose image is already there must not
    queue behind them: it looks again every second while the lock is taken."""
    with path.open("a") as handle:
        while True:
            found = ready()
            if found is not None:
                yield found
                return
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(1.0)
        try:
            yield None
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def bootstrap(
    spec: BaseImageSpec,
    *,
    engine: Engine | None = None,
    force: bool = False,
    progress: Progress = _quiet,
) -> ImageRecord:
    """The base image for ``spec``, built only when the engine does not have it (or ``force``)."""
    started = time.monotonic()
    engine = engine or Engine.from_env()
    if spec.public_image:
        return _public(spec, engine, started)
    base_dir = Path(spec.cache_dir) / "base"
    base_dir.mkdir(parents=True, exist_ok=True)

    def ready() -> ImageRecord | None:
        local = None if force else _local(spec, engine)
        if local is None or not _pinned(spec, local):
            return None
        if f"{spec.repository}:{spec.tag}" not in local.tags:
            engine.image_tag(local.id, spec.repository, spec.tag)
        return _record(spec, local, "engine", started, {})

    with _turn(base_dir / "bootstrap.lock", ready) as found:
        if found is not None:
            return found
        if (found := ready()) is not None:  # built while the lock was being taken
            return found
        local = None if force else _local(spec, engine)
        binary = None
        if not answers(spec.registry):
            binary = ensure_tool(("docker-registry", "registry"), "docker-registry", progress)
        with Registry(spec.registry, Path(spec.cache_dir) / "registry", binary) as registry:
            return _build(spec, engine, registry, local, force, started, progress)


def _local(spec: BaseImageSpec, engine: Engine) -> ImageInfo | None:
    found = engine.images(labels={lbl.RECIPE: spec.recipe_hash, lbl.KIND: lbl.KIND_BASE})
    # Images built FROM the base inherit its labels (Docker copies them), so the labels alone
    # do not identify it: it must also carry our tag or our registry's digest. After --force
    # two such images share the recipe; the tag marks the newer one.
    tagged = [info for info in found if f"{spec.repository}:{spec.tag}" in info.tags]
    pinned = [info for info in found if _pinned(spec, info)]
    best = [info for info in tagged if info in pinned] or tagged or pinned
    return best[0] if best else None


def _pinned(spec: BaseImageSpec, info: ImageInfo) -> str | None:
    prefix = f"{spec.registry}/{spec.repository}@"
    return next((ref for ref in info.repo_digests if ref.startswith(prefix)), None)


def _build(
    spec: BaseImageSpec,
    engine: Engine,
    registry: Registry,
    local: ImageInfo | None,
    force: bool,
    started: float,
    progress: Progress,
) -> ImageRecord:
    remote = f"{registry.address}/{spec.repository}"
    steps: dict[str, float] = {}
    if local is not None:  # imported earlier, but the push never happened
        source, info = "engine", local
    elif not force and (digest := registry.manifest_digest(spec.repository, spec.tag)):
        progress(f"restoring {spec.repository}:{spec.tag} from the registry at {registry.address}")
        clock = time.monotonic()
        info = engine.image_pull(f"{remote}@{digest}")
        steps["pull"] = time.monotonic() - clock
        engine.image_tag(info.id, spec.repository, spec.tag)
        engine.image_tag(info.id, remote, spec.tag)
        return _record(spec, info, "registry", started, steps)
    else:
        tarball = Path(spec.cache_dir) / "base" / f"rootfs-{spec.recipe_hash}.tar"
        source = "tarball"
        if force or not tarball.exists():
            clock = time.monotonic()
            _make_rootfs(spec, tarball, progress)
            steps["rootfs"] = time.monotonic() - clock
            source = "mmdebstrap"
        progress(f"importing {tarball.name} into Docker")
        clock = time.monotonic()
        info = engine.image_import(
            tarball, repository=spec.repository, tag=spec.tag, changes=spec.changes()
        )
        steps["import"] = time.monotonic() - clock
    progress(f"pushing to the registry at {registry.address} for a pinned digest")
    clock = time.monotonic()
    engine.image_tag(info.id, remote, spec.tag)
    engine.image_push(remote, spec.tag)
    steps["push"] = time.monotonic() - clock
    pushed = engine.image(info.id)
    if pushed is None or not _pinned(spec, pushed):
        raise InfraError(f"pushed {remote}:{spec.tag} but the engine recorded no digest for it")
    return _record(spec, pushed, source, started, steps)


def _make_rootfs(spec: BaseImageSpec, tarball: Path, progress: Progress) -> None:
    program = ensure_tool(("mmdebstrap",), "mmdebstrap", progress)
    partial = tarball.with_name(tarball.name + ".partial")
    progress(f"building the {spec.suite} root filesystem with mmdebstrap (about a minute)")
    try:
        done = subprocess.run(
            mmdebstrap_command(spec, partial, program),
            capture_output=True,
            text=True,
            timeout=MMDEBSTRAP_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        partial.unlink(missing_ok=True)
        raise InfraError(f"mmdebstrap took longer than {MMDEBSTRAP_TIMEOUT} s") from exc
    if done.returncode:
        partial.unlink(missing_ok=True)
        raise InfraError(
            f"mmdebstrap failed (exit {done.returncode}); is {spec.mirror} reachable?",
            log=(done.stdout + done.stderr)[-20_000:],
        )
    partial.replace(tarball)  # only a complete tar is ever found in the cache


def _record(
    spec: BaseImageSpec, info: ImageInfo, source: str, started: float, steps: Mapping[str, float]
) -> ImageRecord:
    tarball = Path(spec.cache_dir) / "base" / f"rootfs-{spec.recipe_hash}.tar"
    return ImageRecord(
        kind=lbl.KIND_BASE,
        tag=f"{spec.repository}:{spec.tag}",
        image_id=info.id,
        pinned_ref=_pinned(spec, info) or "",
        recipe=spec.recipe_hash,
        source=source,
        size_bytes=info.size,
        rootfs_bytes=tarball.stat().st_size if tarball.exists() else None,
        seconds=time.monotonic() - started,
        steps=dict(steps),
    )


def _public(spec: BaseImageSpec, engine: Engine, started: float) -> ImageRecord:
    assert spec.public_image is not None
    info = engine.image(spec.public_image)
    source = "engine"
    if info is None:
        info, source = engine.image_pull(spec.public_image), "public"
    return ImageRecord(
        kind="public",
        tag=spec.public_image,
        image_id=info.id,
        pinned_ref=spec.public_image,
        recipe=None,
        source=source,
        size_bytes=info.size,
        seconds=time.monotonic() - started,
    )
