"""A running sandbox: commands in it with a time limit, files into it and out of it.

    with engine.sandbox(image_id, run_id="trial-42", limits=Limits(timeout=120)) as box:
        box.put_files("/workspace", {"main.py": b"print(1)\\n"})
        result = box.exec("python3 main.py")     # ExecResult(exit_code=0, stdout="1\\n", …)
        box.stop()
        files = box.copy_out("/workspace")       # regular files only, size-limited

``Engine.sandbox`` creates the container and removes it; this is what a block does with it.
Every command runs as the sandbox's user (``agent`` by default, uid ``AGENT_UID``) unless told
otherwise, and keeps the head and the tail of each output stream up to ``Limits.output_bytes``.

A command's time limit is enforced here, not inside the container (where the program could
escape a ``timeout`` wrapper by forking): past it the whole container is killed, every process in
it with it, and the result says ``timed_out``. Files are still there for ``copy_out`` after that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import docker.errors

from .archive import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ENTRIES,
    Extracted,
    FileEntry,
    extract_regular_files,
    pack,
)
from .errors import InfraError
from .sdk import infra

if TYPE_CHECKING:
    from .engine import Engine

AGENT_UID = 1000
GRADER_UID = 1001


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
        with infra("starting a command in the sandbox"):
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
        with infra("reading a command's exit code"):
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
        with infra(f"copying files into the sandbox at {dest}"):
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
        with infra(f"copying files into the sandbox at {dest}"):
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
        with infra(f"copying {path} out of the sandbox"):
            try:
                chunks, _stat = self._api.get_archive(self.id, path, chunk_size=1 << 16)
            except docker.errors.NotFound:
                raise FileNotFoundError(f"{path} does not exist in the sandbox") from None
            return extract_regular_files(chunks, max_bytes=max_bytes, max_entries=max_entries)

    def stop(self) -> None:
        """Kill every process; the container and its files stay until the block ends."""
        self.alive = False
        with infra("stopping the sandbox"):
            try:
                self._api.kill(self.id)
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: it was not running any more
                    raise
