"""The one module that talks to Docker: images, builds, sandboxes and cleanup.

Everything else in traj2env reaches the engine through ``Engine``; tests swap a fake here and a
``docker``-marked suite runs the real thing. The client comes from the environment
(``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``, ``DOCKER_CERT_PATH``), so a worker host points at its
own engine without configuration here.

Two kinds of failure are kept apart. ``InfraError`` means the harness could not do its job
(daemon unreachable or erroring, a build that failed, an API call that hung): the trial is
ungraded. What the checked program does, a non-zero exit code or running past its time limit, is
an ``ExecResult``: the program's own outcome, to be graded.

A sandbox is a container that idles (``sleep infinity`` under Docker's init, which reaps orphaned
processes) while commands run in it with ``exec``. It has no network (``network_mode=none``),
CPU, memory (no swap) and process limits, no privilege escalation through setuid binaries, and
carries ``traj2env.run`` / ``traj2env.owner`` labels. The idle process runs as root and every
command as the sandbox's user (``agent`` by default, uid 1000, no capabilities): with
no-new-privileges, a container whose own user is unprivileged gives even a root ``exec`` no
capabilities (measured), and the harness needs root to create folders and restore files.
``Engine.sandbox`` removes the container when the block ends, on exceptions and KeyboardInterrupt
too; what a killed process leaves behind is found by its labels and removed by
``Engine.cleanup``.

A command's time limit is enforced here, not inside the container (where the program could
escape a ``timeout`` wrapper by forking): past it the whole container is killed, every process in
it with it, and the result says ``timed_out``. Files are still there for ``copy_out`` after that.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from . import labels as lbl
from .archive import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ENTRIES,
    Extracted,
    FileEntry,
    extract_regular_files,
    pack,
)
from .errors import InfraError
from .hashing import context_hash

DEFAULT_API_TIMEOUT = 120  # seconds for one API call; streams (exec, build) are timed separately
AGENT_UID = 1000
GRADER_UID = 1001
BUILD_REPOSITORY = "traj2env/build"
_LOG_CHARS = 20_000  # build log kept for an error message: its end, where the failure is


def _explain(exc: BaseException) -> str:
    if isinstance(exc, docker.errors.APIError) and exc.explanation:
        return str(exc.explanation)
    return str(exc) or type(exc).__name__


@contextlib.contextmanager
def _infra(what: str) -> Iterator[None]:
    """Turn the SDK's and the transport's errors into InfraError naming what we were doing."""
    try:
        yield
    except InfraError:
        raise
    except docker.errors.DockerException as exc:
        raise InfraError(f"{what}: {_explain(exc)}") from exc
    except (requests.exceptions.RequestException, ConnectionError, TimeoutError) as exc:
        raise InfraError(f"{what}: the Docker daemon did not answer ({exc})") from exc


@dataclass(frozen=True, slots=True)
class ImageInfo:
    id: str
    tags: tuple[str, ...] = ()
    repo_digests: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    size: int = 0
    user: str = ""  # the image's USER ("" is root); only an inspect result carries it

    @classmethod
    def from_api(cls, attrs: Mapping[str, Any]) -> ImageInfo:
        """From an inspect result or an image-list row (their shapes differ)."""
        config = attrs.get("Config") or {}
        labels = attrs.get("Labels") if "Labels" in attrs else config.get("Labels")
        return cls(
            id=attrs["Id"],
            tags=tuple(t for t in attrs.get("RepoTags") or () if not t.startswith("<none>")),
            repo_digests=tuple(
                d for d in attrs.get("RepoDigests") or () if not d.startswith("<none>")
            ),
            labels=dict(labels or {}),
            size=int(attrs.get("Size") or 0),
            user=str(config.get("User") or ""),
        )


@dataclass(frozen=True, slots=True)
class BuiltImage:
    image_id: str
    tag: str
    context_hash: str
    reused: bool
    seconds: float
    log: str = ""


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    id: str
    name: str
    status: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CleanupReport:
    containers: tuple[str, ...] = ()
    networks: tuple[str, ...] = ()
    volumes: tuple[str, ...] = ()
    kept_live: tuple[str, ...] = ()  # owned by a process that still runs

    def as_json(self) -> dict[str, list[str]]:
        return {
            "containers": list(self.containers),
            "networks": list(self.networks),
            "volumes": list(self.volumes),
            "kept_live": list(self.kept_live),
        }


@dataclass(frozen=True, slots=True)
class Limits:
    cpus: float = 1.0
    memory_bytes: int = 1 << 30
    pids: int = 512
    timeout: float = 600.0  # seconds per exec, wall clock
    output_bytes: int = 1 << 20  # kept per stream: the first and the last half


@dataclass(frozen=True, slots=True)
class ExecResult:
    exit_code: int | None  # None when the time limit killed the command
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class _Capture:
    """Keeps the head and the tail of each output stream up to a budget, drops the middle."""

    def __init__(self, limit: int) -> None:
        self._half = max(limit // 2, 1)
        self._head = (bytearray(), bytearray())
        self._tail = (bytearray(), bytearray())
        self._dropped = [0, 0]
        self.error: BaseException | None = None

    def add(self, index: int, data: bytes) -> None:
        head, tail = self._head[index], self._tail[index]
        room = self._half - len(head)
        if room > 0:
            head += data[:room]
            data = data[room:]
        if data:
            tail += data
            excess = len(tail) - self._half
            if excess > 0:
                self._dropped[index] += excess
                del tail[:excess]

    def drain(self, stream: Iterable[tuple[bytes | None, bytes | None]]) -> None:
        try:
            for out, err in stream:
                if out:
                    self.add(0, out)
                if err:
                    self.add(1, err)
        except BaseException as exc:  # reported to the waiting thread, which decides
            self.error = exc

    def text(self, index: int) -> str:
        middle = b""
        if self._dropped[index]:
            middle = f"\n[... {self._dropped[index]} bytes dropped ...]\n".encode()
        return bytes(self._head[index] + middle + self._tail[index]).decode("utf-8", "replace")

    @property
    def truncated(self) -> bool:
        return any(self._dropped)


class Sandbox:
    """One running container of a sandbox block; see ``Engine.sandbox``."""

    def __init__(self, engine: Engine, container_id: str, *, user: str, limits: Limits) -> None:
        self._engine = engine
        self._api = engine.api
        self.id = container_id
        self.user = user
        self.limits = limits
        self.alive = True

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        user: str | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Run ``cmd`` (a string goes to ``/bin/sh -c``) and wait for it, up to ``timeout``."""
        if not self.alive:
            raise InfraError("the sandbox was stopped (a time limit or stop()); start a new one")
        argv = ["/bin/sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        limit = self.limits.timeout if timeout is None else timeout
        started = time.monotonic()
        with _infra("starting a command in the sandbox"):
            exec_id = self._api.exec_create(
                self.id,
                argv,
                user=user or self.user,
                workdir=workdir,
                environment=dict(env) if env else None,
                stdout=True,
                stderr=True,
            )["Id"]
            stream = self._api.exec_start(exec_id, stream=True, demux=True)
        capture = _Capture(self.limits.output_bytes)
        # The stream blocks without a timeout of its own, so a thread reads it while this one
        # keeps the clock; KeyboardInterrupt still lands here and the sandbox block cleans up.
        reader = threading.Thread(target=capture.drain, args=(stream,), daemon=True)
        reader.start()
        reader.join(limit)
        exit_code = None if reader.is_alive() else self._wait_exit(exec_id, started + limit)
        if exit_code is None:
            self.stop()
            stream.close()
            reader.join(5)
            return ExecResult(
                None,
                capture.text(0),
                capture.text(1),
                time.monotonic() - started,
                timed_out=True,
                truncated=capture.truncated,
            )
        if capture.error is not None:
            raise InfraError(f"reading the command's output failed: {capture.error}")
        return ExecResult(
            exit_code,
            capture.text(0),
            capture.text(1),
            time.monotonic() - started,
            truncated=capture.truncated,
        )

    def _wait_exit(self, exec_id: str, deadline: float) -> int | None:
        # The output can end before the process does (it may close stdout and go on).
        with _infra("reading a command's exit code"):
            while True:
                info = self._api.exec_inspect(exec_id)
                if not info.get("Running"):
                    if info.get("ExitCode") is None:
                        raise InfraError("the engine reported no exit code for a finished command")
                    return int(info["ExitCode"])
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.02)

    def put_files(
        self,
        dest: str,
        files: Mapping[str, bytes | FileEntry],
        *,
        owner: tuple[int, int] = (AGENT_UID, AGENT_UID),
    ) -> None:
        """Write ``files`` (paths relative to ``dest``) owned by ``owner``.

        A missing ``dest`` is created (owned by ``owner``, its missing parents by root) while the
        sandbox runs; in a stopped one it must exist.
        """
        if not dest.startswith("/") or ".." in dest.split("/"):
            raise ValueError(f"sandbox destination {dest!r} must be an absolute path")
        data = pack(files, uid=owner[0], gid=owner[1])
        with _infra(f"copying files into the sandbox at {dest}"):
            try:
                self._api.put_archive(self.id, dest, data)
                return
            except docker.errors.NotFound:
                if not self.alive:
                    raise FileNotFoundError(f"{dest} is missing in the stopped sandbox") from None
        made = self.exec(
            ["install", "-d", "-o", str(owner[0]), "-g", str(owner[1]), dest],
            user="root",
            timeout=60,
        )
        if not made.ok:
            raise InfraError(f"creating {dest} in the sandbox failed: {made.stderr.strip()}")
        with _infra(f"copying files into the sandbox at {dest}"):
            self._api.put_archive(self.id, dest, data)

    def copy_out(
        self,
        path: str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> Extracted:
        """The regular files under ``path`` (see ``archive``); works on a stopped sandbox too.

        Raises FileNotFoundError when ``path`` does not exist (the program's doing) and
        ArchiveTooLarge past the limits.
        """
        with _infra(f"copying {path} out of the sandbox"):
            try:
                chunks, _stat = self._api.get_archive(self.id, path, chunk_size=1 << 16)
            except docker.errors.NotFound:
                raise FileNotFoundError(f"{path} does not exist in the sandbox") from None
            return extract_regular_files(chunks, max_bytes=max_bytes, max_entries=max_entries)

    def stop(self) -> None:
        """Kill every process; the container and its files stay until the block ends."""
        self.alive = False
        with _infra("stopping the sandbox"):
            try:
                self._api.kill(self.id)
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: it was not running any more
                    raise


class Engine:
    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self.api = client.api

    @classmethod
    def from_env(cls, *, timeout: int = DEFAULT_API_TIMEOUT) -> Engine:
        """A client for the engine the environment names, or InfraError if it does not answer."""
        where = os.environ.get("DOCKER_HOST") or "the default socket"
        try:
            client = docker.from_env(timeout=timeout)
            client.ping()
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise InfraError(
                f"the Docker daemon at {where} is unreachable ({_explain(exc)}); start it, or "
                "point DOCKER_HOST at a running one"
            ) from exc
        return cls(client)

    # -- images -------------------------------------------------------------------------------

    def image(self, ref: str) -> ImageInfo | None:
        with _infra(f"inspecting image {ref}"):
            try:
                return ImageInfo.from_api(self.api.inspect_image(ref))
            except docker.errors.NotFound:
                return None

    def images(self, *, labels: Mapping[str, str | None]) -> list[ImageInfo]:
        """Images carrying every label (``None``: the key with any value)."""
        filters = [key if value is None else f"{key}={value}" for key, value in labels.items()]
        with _infra("listing images"):
            rows = self.api.images(filters={"label": filters})
        return [ImageInfo.from_api(row) for row in rows]

    def image_import(
        self, tarball: Path, *, repository: str, tag: str, changes: Sequence[str] = ()
    ) -> ImageInfo:
        """``docker import`` of a root filesystem tar, with Dockerfile-style ``changes``."""
        with _infra(f"importing {tarball} as {repository}:{tag}"):
            self.api.import_image(
                src=str(tarball), repository=repository, tag=tag, changes=list(changes)
            )
        info = self.image(f"{repository}:{tag}")
        if info is None:
            raise InfraError(f"importing {tarball} succeeded but {repository}:{tag} is missing")
        return info

    def image_tag(self, image: str, repository: str, tag: str) -> None:
        with _infra(f"tagging {image} as {repository}:{tag}"):
            self.api.tag(image, repository, tag, force=True)

    def image_push(self, repository: str, tag: str) -> str:
        """Push to the registry the repository names; returns the manifest digest."""
        digest = None
        with _infra(f"pushing {repository}:{tag}"):
            for event in self.api.push(repository, tag=tag, stream=True, decode=True):
                if "error" in event:
                    raise InfraError(f"pushing {repository}:{tag} failed: {event['error']}")
                digest = (event.get("aux") or {}).get("Digest") or digest
        if not digest:
            raise InfraError(f"pushing {repository}:{tag} reported no digest")
        return digest

    def image_pull(self, ref: str) -> ImageInfo:
        """Pull ``repo:tag`` or ``repo@sha256:...``."""
        repository, at, digest = ref.partition("@")
        with _infra(f"pulling {ref}"):
            events = self.api.pull(repository, tag=digest if at else None, stream=True, decode=True)
            for event in events:
                if "error" in event:
                    raise InfraError(f"pulling {ref} failed: {event['error']}")
        info = self.image(ref)
        if info is None:
            raise InfraError(f"pulling {ref} reported success but the image is missing")
        return info

    def build(
        self,
        context: Path,
        *,
        timeout: float = 1800.0,
        repository: str = BUILD_REPOSITORY,
    ) -> BuiltImage:
        """Build ``context`` (with its Dockerfile) once; the same content reuses the image.

        The build has no network: dependencies come from the context (a wheelhouse, an npm
        cache). The cache key is the context's content hash, carried in the tag
        ``traj2env/build:<hash>`` rather than a label: the classic builder turns every build
        label into one more committed step, and each step costs 5-8 s on a fuse-overlayfs engine
        with a base this size (measured). Images built FROM the base inherit its labels.
        ``timeout`` bounds each silent stretch of the build and the build as a whole, checked
        whenever the builder reports progress.
        """
        started = time.monotonic()
        digest = context_hash(context)
        tag = f"{repository}:{digest}"
        existing = self.image(tag)
        if existing is not None:
            return BuiltImage(
                existing.id, tag, digest, reused=True, seconds=time.monotonic() - started
            )
        log: list[str] = []
        image_id = None
        with _infra(f"building {context}"):
            events = self.api.build(
                path=str(context),
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
                network_mode="none",
                timeout=int(timeout) + 1,
            )
            for event in events:
                if "stream" in event:
                    log.append(event["stream"])
                if "error" in event:
                    raise InfraError(
                        f"building {context} failed: {event['error'].strip()}",
                        log="".join(log)[-_LOG_CHARS:],
                    )
                image_id = (event.get("aux") or {}).get("ID") or image_id
                if time.monotonic() - started > timeout:
                    raise InfraError(
                        f"building {context} took longer than {timeout:.0f} s",
                        log="".join(log)[-_LOG_CHARS:],
                    )
        tail = "".join(log)[-_LOG_CHARS:]
        if image_id is None:
            raise InfraError(f"building {context} ended without an image", log=tail)
        return BuiltImage(
            image_id, tag, digest, reused=False, seconds=time.monotonic() - started, log=tail
        )

    # -- sandboxes ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def sandbox(
        self,
        image: str,
        *,
        run_id: str,
        user: str = "agent",
        limits: Limits = Limits(),  # noqa: B008 - frozen, so one shared default is safe
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Iterator[Sandbox]:
        """A fresh container of ``image`` for the block, removed however the block ends.

        ``user`` is the default for ``exec``; ``limits.timeout`` the default per-command limit.
        """
        labels = {
            lbl.RUN: lbl.check_value(run_id, what="run id"),
            lbl.OWNER: lbl.owner_token(),
            lbl.KIND: lbl.KIND_SANDBOX,
        }
        host_config = self.api.create_host_config(
            network_mode="none",
            nano_cpus=int(limits.cpus * 1e9),
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,  # equal to the memory limit: no swap
            pids_limit=limits.pids,
            init=True,
            security_opt=["no-new-privileges"],
        )
        name = f"traj2env-{run_id.replace(':', '-')[:40]}-{secrets.token_hex(3)}"
        with _infra(f"creating a sandbox from {image}"):
            try:
                container_id = self.api.create_container(
                    image,
                    command=["sleep", "infinity"],
                    user="0",  # the idle process; commands run as `user` through exec
                    working_dir=workdir,
                    environment=dict(env) if env else None,
                    labels=labels,
                    name=name,
                    hostname="sandbox",
                    host_config=host_config,
                )["Id"]
            except docker.errors.ImageNotFound:
                raise InfraError(
                    f"image {image} is not in the engine; build or bootstrap it first"
                ) from None
        try:
            with _infra("starting the sandbox"):
                self.api.start(container_id)
            yield Sandbox(self, container_id, user=user, limits=limits)
        except BaseException:
            # Cleanup must not hide why the block failed; a leftover is for cleanup() to find.
            with contextlib.suppress(Exception):
                self._remove_container(container_id)
            raise
        self._remove_container(container_id)

    def _remove_container(self, container_id: str) -> None:
        with _infra(f"removing container {container_id[:12]}"):
            try:
                self.api.remove_container(container_id, force=True, v=True)
            except docker.errors.NotFound:
                pass

    def containers(self, *, label: str = lbl.RUN) -> list[ContainerInfo]:
        """Containers, running or not, that carry ``label`` (``key`` or ``key=value``)."""
        with _infra("listing containers"):
            rows = self.api.containers(all=True, filters={"label": lbl.label_filter(label)})
        return [
            ContainerInfo(
                id=row["Id"],
                name=(row.get("Names") or ["?"])[0].lstrip("/"),
                status=row.get("State", ""),
                labels=dict(row.get("Labels") or {}),
            )
            for row in rows
        ]

    def cleanup(self, *, label: str = lbl.RUN, include_live: bool = False) -> CleanupReport:
        """Remove containers, then networks and volumes, carrying ``label``.

        Resources whose owning process still runs on this host are kept (another worker's live
        trial) unless ``include_live``; networks and volumes still in use are left alone.
        """
        label = lbl.label_filter(label)
        removed: dict[str, list[str]] = {"containers": [], "networks": [], "volumes": []}
        kept: list[str] = []
        for container in self.containers(label=label):
            if include_live or lbl.is_orphan(container.labels):
                self._remove_container(container.id)
                removed["containers"].append(container.name)
            else:
                kept.append(container.name)
        with _infra("removing leftover networks and volumes"):
            for network in self.api.networks(filters={"label": label}):
                if not include_live and not lbl.is_orphan(network.get("Labels") or {}):
                    kept.append(network["Name"])
                    continue
                with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                    self.api.remove_network(network["Id"])
                    removed["networks"].append(network["Name"])
            for volume in self.api.volumes(filters={"label": label}).get("Volumes") or []:
                if not include_live and not lbl.is_orphan(volume.get("Labels") or {}):
                    kept.append(volume["Name"])
                    continue
                with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                    self.api.remove_volume(volume["Name"])
                    removed["volumes"].append(volume["Name"])
        return CleanupReport(
            containers=tuple(removed["containers"]),
            networks=tuple(removed["networks"]),
            volumes=tuple(removed["volumes"]),
            kept_live=tuple(kept),
        )
