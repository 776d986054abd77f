"""The engine: images, builds, the sandbox block and cleanup, over one Docker client.

Everything else in traj2env reaches Docker through ``Engine``; tests swap a fake here and a
``docker``-marked suite runs the real thing. The client comes from the environment
(``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``, ``DOCKER_CERT_PATH``), so a worker host points at its
own engine without configuration here. What a block does inside a sandbox is in ``sandbox``;
how SDK failures become ``InfraError`` is in ``sdk``.

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
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from . import docker_labels as lbl
from .errors import InfraError
from .hashing import context_hash
from .sandbox import AGENT_UID as AGENT_UID  # re-exported: trials/ imports it from here
from .sandbox import Limits, Sandbox
from .sdk import explain, infra

DEFAULT_API_TIMEOUT = 120  # seconds for one API call; streams (exec, build) are timed separately
BUILD_REPOSITORY = "traj2env/build"
_LOG_CHARS = 20_000  # build log kept for an error message: its end, where the failure is


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
                f"the Docker daemon at {where} is unreachable ({explain(exc)}); start it, or "
                "point DOCKER_HOST at a running one"
            ) from exc
        return cls(client)

    # -- images -------------------------------------------------------------------------------

    def image(self, ref: str) -> ImageInfo | None:
        with infra(f"inspecting image {ref}"):
            try:
                return ImageInfo.from_api(self.api.inspect_image(ref))
            except docker.errors.NotFound:
                return None

    def images(self, *, labels: Mapping[str, str | None]) -> list[ImageInfo]:
        """Images carrying every label (``None``: the key with any value)."""
        filters = [key if value is None else f"{key}={value}" for key, value in labels.items()]
        with infra("listing images"):
            rows = self.api.images(filters={"label": filters})
        return [ImageInfo.from_api(row) for row in rows]

    def image_import(
        self, tarball: Path, *, repository: str, tag: str, changes: Sequence[str] = ()
    ) -> ImageInfo:
        """``docker import`` of a root filesystem tar, with Dockerfile-style ``changes``."""
        with infra(f"importing {tarball} as {repository}:{tag}"):
            self.api.import_image(
                src=str(tarball), repository=repository, tag=tag, changes=list(changes)
            )
        info = self.image(f"{repository}:{tag}")
        if info is None:
            raise InfraError(f"importing {tarball} succeeded but {repository}:{tag} is missing")
        return info

    def image_tag(self, image: str, repository: str, tag: str) -> None:
        with infra(f"tagging {image} as {repository}:{tag}"):
            self.api.tag(image, repository, tag, force=True)

    def image_remove(self, ref: str) -> None:
        """Remove one reference (a tag): the image stays while other references name it."""
        with infra(f"removing {ref}"):
            try:
                self.api.remove_image(ref, noprune=True)
            except docker.errors.NotFound:
                pass

    def image_push(self, repository: str, tag: str) -> str:
        """Push to the registry the repository names; returns the manifest digest."""
        digest = None
        with infra(f"pushing {repository}:{tag}"):
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
        with infra(f"pulling {ref}"):
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
        with infra(f"building {context}"):
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
        with infra(f"creating a sandbox from {image}"):
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
            with infra("starting the sandbox"):
                self.api.start(container_id)
            yield Sandbox(self, container_id, user=user, limits=limits)
        except BaseException:
            # Cleanup must not hide why the block failed; a leftover is for cleanup() to find.
            with contextlib.suppress(Exception):
                self._remove_container(container_id)
            raise
        self._remove_container(container_id)

    def _remove_container(self, container_id: str) -> None:
        with infra(f"removing container {container_id[:12]}"):
            try:
                self.api.remove_container(container_id, force=True, v=True)
            except docker.errors.NotFound:
                pass

    def containers(self, *, label: str = lbl.RUN) -> list[ContainerInfo]:
        """Containers, running or not, that carry ``label`` (``key`` or ``key=value``)."""
        with infra("listing containers"):
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
        with infra("removing leftover networks and volumes"):
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
