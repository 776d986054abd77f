"""A Harbor environment on traj2env's Docker seam: ``harbor run`` offline, without docker compose.

    harbor run -p TASK_DIR -a oracle -o JOBS_DIR \\
        --env training.core.harbor.environment:OfflineDockerEnvironment

Harbor's own trial flow drives it: the agent's container is started here, the agent works in it,
the task's ``artifacts`` (our tasks declare ``/app``) are downloaded into the trial folder
(``<trial>/artifacts/app/``) and the container removed; with ``environment_mode = "separate"``
Harbor then starts a second environment of the same class from the same ``environment/``,
uploads the collected ``/app`` and ``tests/`` into it and runs ``tests/test.sh`` as the task's
verifier user; the reward lands in ``<trial>/verifier/reward.txt`` and ``result.json``.

Everything goes through ``groundwork.core.docker``: images are built once per content (the
trial matrix's builds are reused, nothing is pulled), every container has no network, CPU,
memory and process limits and the ``traj2env.run`` label (``--ek run_id=...``, by default
``harbor-<session>``), and is removed on ``stop`` or when ``start`` fails; a killed ``harbor``
leaves containers that ``manage.py images cleanup`` finds by that label.

Where this differs from Harbor's docker environment, on purpose:

* Network: only ``no-network`` is served. A task or phase asking for public network or an
  allowlist (an installed agent calling a remote model adds its host to one) is refused, as
  Harbor requires of a provider that cannot enforce a policy; agents that call their model from
  the host side (``terminus-2``, ``oracle``, ``nop``) run.
* Downloads keep regular files only: symbolic links, devices and FIFOs are refused (and logged),
  as everywhere a submission crosses in traj2env, since a link resolves wherever it lands.
* A command's time limit is applied inside the container with ``timeout`` (the container
  lives on, as with ``docker compose exec``); the seam's own limit, a little later, kills the
  container if even that fails.
* ``force_build`` cannot force anything: the build is content-addressed and offline, so the
  same context gives the same image. ``delete`` removes containers, never the cached images.
* No host bind mounts (``--mounts``) and no compose files.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import (
    EnvironmentCapabilities,
    EnvironmentResourceCapabilities,
)
from harbor.environments.definition import (
    COMPOSE_FILE_NAME,
    DOCKERFILE_NAME,
    require_agent_environment_definition,
    should_use_prebuilt_docker_image,
)
from harbor.environments.options import EnvironmentOptions
from harbor.models.task.config import NetworkMode
from harbor.models.trial.config import ResourceMode
from pydantic import Field, field_validator

from groundwork.core.docker import (
    ArchiveTooLarge,
    Engine,
    Extracted,
    FileEntry,
    InfraError,
    Limits,
    Sandbox,
)
from groundwork.core.docker import docker_labels as lbl

TYPE = "traj2env"
# Copy-out is held in memory while it is written to the trial folder.
DOWNLOAD_MAX_BYTES = 256 << 20
DOWNLOAD_MAX_ENTRIES = 100_000
OUTPUT_BYTES = 8 << 20  # kept per stream of one command (its head and tail)
PIDS = 2048  # agents run shells, language servers and test runners side by side
# A command Harbor gives no limit is bounded by the caller's own timeout (and ends when stop()
# removes the container); this only keeps a worker thread from waiting for ever.
UNBOUNDED_SECONDS = 24 * 3600
KILL_GRACE_SECONDS = 10  # `timeout -k`: from TERM to KILL
HARD_MARGIN_SECONDS = 30  # then the seam kills the whole container
_TIMEOUT_EXITS = (124, 137)  # GNU timeout: TERM worked / KILL was needed
_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]+")

_build_locks: dict[Path, threading.Lock] = {}
_build_locks_guard = threading.Lock()


def _build_lock(context: Path) -> threading.Lock:
    """One build per context at a time: concurrent trials of a task then share the image."""
    with _build_locks_guard:
        return _build_locks.setdefault(context.resolve(), threading.Lock())


def default_run_id(session_id: str) -> str:
    return ("harbor-" + _LABEL_UNSAFE.sub("-", session_id))[:128]


class OfflineDockerOptions(EnvironmentOptions):
    run_id: str | None = Field(
        default=None,
        description="The traj2env.run label of every container (default harbor-<session id>).",
    )

    @field_validator("run_id")
    @classmethod
    def _label_safe(cls, value: str | None) -> str | None:
        return None if value is None else lbl.check_value(value, what="run_id")


class OfflineDockerEnvironment(BaseEnvironment):
    options_model: ClassVar[type[EnvironmentOptions] | None] = OfflineDockerOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The base class validates (and reads capabilities) inside __init__.
        self._engine: Engine | None = None
        self._box: Sandbox | None = None
        self._containers = contextlib.ExitStack()
        self._lock = threading.Lock()
        self._stopped = False
        self._image_user = "root"
        self._has_timeout = True
        super().__init__(*args, **kwargs)
        if self._host_mounts:
            raise ValueError(
                f"the {TYPE} environment copies files in and out and binds no host folders; "
                "drop --mounts"
            )

    @staticmethod
    def type() -> str:
        return TYPE

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True)

    @classmethod
    def resource_capabilities(cls) -> EnvironmentResourceCapabilities:
        return EnvironmentResourceCapabilities(
            cpu_limit=True, memory_limit=True, fractional_cpus=True
        )

    @classmethod
    def preflight(cls, kwargs: dict[str, Any] | None = None) -> None:
        super().preflight(kwargs)
        try:
            Engine.from_env()
        except InfraError as exc:
            raise SystemExit(f"{TYPE} environment: {exc.message}") from None

    def _validate_definition(self) -> None:
        folder = self.environment_dir
        if (folder / COMPOSE_FILE_NAME).exists() and not (folder / DOCKERFILE_NAME).exists():
            raise ValueError(
                f"{folder} defines a docker-compose environment; the {TYPE} environment runs "
                "one container per task (a Dockerfile or a local image)"
            )
        require_agent_environment_definition(folder, docker_image=self.task_env_config.docker_image)

    @property
    def run_id(self) -> str:
        chosen = getattr(self.options, "run_id", None)
        return chosen or default_run_id(self.session_id)

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, force_build: bool) -> None:
        mode = self.network_policy.network_mode
        if mode != NetworkMode.NO_NETWORK:
            raise ValueError(
                f"network_mode={mode.value!r}: the {TYPE} environment runs every container "
                "without network and cannot give one access (an installed agent that calls a "
                "remote model needs it); use a host-side agent or --env docker"
            )
        try:
            await asyncio.to_thread(self._start, force_build)
            await self._upload_environment_dir_after_start()
            # Harbor's log folders (/logs/agent, /logs/verifier, /logs/artifacts), writable by
            # whichever user the agent or the verifier runs as.
            await self.ensure_dirs(self._mount_targets(writable_only=True))
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.shield(asyncio.to_thread(self._stop))
            raise

    def _start(self, force_build: bool) -> None:
        engine = self._engine = self._engine or Engine.from_env()
        image = self._image(engine, force_build)
        info = engine.image(image)
        self._image_user = (info.user if info else "") or "root"
        with self._lock:
            # stop() may have run while the image was built; then nothing may start after it.
            if self._stopped:
                raise RuntimeError("the environment was stopped while it was starting")
            box = self._box = self._containers.enter_context(
                engine.sandbox(
                    image,
                    run_id=self.run_id,
                    user=self._image_user,
                    limits=self._limits(),
                    env=self._startup_env() or None,
                )
            )
        probe = box.exec(["sh", "-c", "command -v timeout"], user="root", timeout=60)
        self._has_timeout = probe.ok

    def _image(self, engine: Engine, force_build: bool) -> str:
        ref = self.task_env_config.docker_image
        if ref and should_use_prebuilt_docker_image(
            self.environment_dir, docker_image=ref, force_build=force_build
        ):
            if engine.image(ref) is None:
                raise InfraError(
                    f"image {ref} is not in the local Docker engine and the {TYPE} environment "
                    "never pulls; load or build it first"
                )
            return ref
        with _build_lock(self.environment_dir):
            built = engine.build(
                self.environment_dir, timeout=float(self.task_env_config.build_timeout_sec)
            )
        return built.image_id

    def _limits(self) -> Limits:
        machine_cpus = float(os.cpu_count() or 1)
        cpus = self._resource_limit_value("cpu", auto_mode=ResourceMode.LIMIT)
        memory_mb = self._resource_limit_value("memory", auto_mode=ResourceMode.LIMIT)
        if memory_mb is None:  # "ignore": the machine's memory is the only bound
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        else:
            memory = int(memory_mb) << 20
        return Limits(
            # Docker refuses more CPUs than the machine has.
            cpus=min(float(cpus), machine_cpus) if cpus else machine_cpus,
            memory_bytes=memory,
            pids=PIDS,
            timeout=UNBOUNDED_SECONDS,
            output_bytes=OUTPUT_BYTES,
        )

    async def stop(self, delete: bool) -> None:
        await asyncio.to_thread(self._stop)

    def _stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._box = None
            self._containers.close()

    def _sandbox(self) -> Sandbox:
        if self._box is None:
            raise RuntimeError(f"the {TYPE} environment {self.session_id} is not running")
        return self._box

    # -- commands -------------------------------------------------------------------------------

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        box = self._sandbox()
        argv = ["bash", "-c", command]
        hard = float(UNBOUNDED_SECONDS)
        if timeout_sec:
            hard = float(timeout_sec)
            if self._has_timeout:
                argv = ["timeout", "-k", str(KILL_GRACE_SECONDS), str(timeout_sec), *argv]
                hard += KILL_GRACE_SECONDS + HARD_MARGIN_SECONDS
        who = self._resolve_user(user)
        done = await asyncio.to_thread(
            box.exec,
            argv,
            user=self._image_user if who is None else str(who),
            workdir=cwd or self.task_env_config.workdir,
            env=self._merge_env(env),
            timeout=hard,
        )
        if done.timed_out:
            raise RuntimeError(
                f"Command timed out after {timeout_sec or hard:.0f} seconds "
                "(the container was stopped with it)"
            )
        if timeout_sec and done.exit_code in _TIMEOUT_EXITS and done.seconds >= timeout_sec:
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds")
        callback = self._output_callback()
        if callback is not None:
            if done.stdout:
                await callback(done.stdout, "stdout")
            if done.stderr:
                await callback(done.stderr, "stderr")
        assert done.exit_code is not None  # only a timed-out command lacks one
        return ExecResult(
            stdout=done.stdout or None, stderr=done.stderr or None, return_code=done.exit_code
        )

    # -- files ----------------------------------------------------------------------------------

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        box = self._sandbox()
        source = Path(source_path)
        entry = FileEntry(source.read_bytes(), executable=os.access(source, os.X_OK))
        if target_path.endswith("/"):
            folder, name = target_path, source.name
        else:
            folder, name = posixpath.split(target_path)
        # Root-owned, as `docker compose cp` leaves them.
        await asyncio.to_thread(box.put_files, folder or "/", {name: entry}, owner=(0, 0))

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        box = self._sandbox()
        files = await asyncio.to_thread(host_files, Path(source_dir))
        await asyncio.to_thread(box.put_files, target_dir, files, owner=(0, 0))

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        got = await asyncio.to_thread(self._copy_out, source_path)
        name = posixpath.basename(source_path.rstrip("/"))
        if list(got.files) != [name]:
            why = "; ".join(r.reason for r in got.refused) or "a directory"
            raise FileNotFoundError(f"{source_path} is not a regular file ({why})")
        write_file(Path(target_path), got.files[name])

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        got = await asyncio.to_thread(self._copy_out, source_dir)
        target = Path(target_dir)
        target.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(write_tree, target, got.files)
        if got.refused:
            shown = ", ".join(f"{r.path} ({r.reason})" for r in got.refused[:5])
            self.logger.warning(
                f"{len(got.refused)} entries of {source_dir} were not copied "
                f"(only regular files leave a {TYPE} container): {shown}"
            )

    def _copy_out(self, path: str) -> Extracted:
        # Works on a container killed at a time limit too: its files are still there.
        try:
            return self._sandbox().copy_out(
                path, max_bytes=DOWNLOAD_MAX_BYTES, max_entries=DOWNLOAD_MAX_ENTRIES
            )
        except ArchiveTooLarge as exc:
            raise RuntimeError(f"{path} is too large to download: {exc}") from None


def host_files(folder: Path) -> dict[str, FileEntry]:
    """The regular files under ``folder`` by relative POSIX path; symlinks are not followed."""
    files: dict[str, FileEntry] = {}
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(folder).as_posix()
            files[rel] = FileEntry(path.read_bytes(), executable=os.access(path, os.X_OK))
    return files


def write_file(path: Path, entry: FileEntry) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():  # never write through a link left in the trial folder
        path.unlink()
    path.write_bytes(entry.data)
    path.chmod(0o755 if entry.executable else 0o644)


def write_tree(root: Path, files: Mapping[str, FileEntry]) -> None:
    """Write copied-out files (already checked to stay inside their folder) under ``root``."""
    for rel, entry in files.items():
        write_file(root / rel, entry)
