"""A Docker registry on loopback, so that locally built images get a real ``@sha256:`` digest.

Why a registry at all (measured on Docker 20.10, classic builder, no registry access):

- ``FROM traj2env/base@sha256:<image id>`` fails: the builder looks a ``name@digest`` reference
  up among the *repository digests* the engine knows, finds none for an imported image, and
  tries to pull from Docker Hub.
- ``FROM sha256:<image id>`` (or the bare id) builds, but is not a ``name@sha256:`` reference,
  so Harbor's lint rule unpinned-image (``@sha256:[0-9a-f]{64}$``) rejects it.
- ``docker load`` cannot add one: a digest reference in a saved archive's ``RepoTags`` is
  refused ("invalid tag"), and ``docker tag`` refuses digests too.
- Pushing to a registry records the manifest digest in the engine's reference store. From then
  on ``FROM 127.0.0.1:5000/traj2env/base@sha256:<manifest digest>`` resolves locally, with the
  registry stopped, and satisfies the lint rule. After a prune, pulling that reference back
  from the registry restores the same image id and digest, so task Dockerfiles stay valid.

The registry is Debian's ``docker-registry`` package (the Distribution project's registry v2), run
as a plain process on demand: the ``registry:2`` image could not be pulled here. Docker treats
127.0.0.0/8 as an insecure registry by default, so plain HTTP on loopback needs no daemon
configuration. If something already serves the registry API at the address (a ``registry:2``
container, Debian's system service), it is used as is.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import secrets
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from .errors import SetupError

MANIFEST_TYPES = (
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
)
CONFIG = """\
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {storage}
  delete:
    enabled: false
http:
  addr: {address}
  secret: {secret}
"""


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# The registry is on loopback: a proxy from the environment must not be asked for it.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _request(
    url: str, *, method: str = "GET", accept: str | None = None, timeout: float = 5.0
) -> http.client.HTTPResponse | None:
    request = urllib.request.Request(url, method=method)
    if accept:
        request.add_header("Accept", accept)
    try:
        return _OPENER.open(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        return exc  # type: ignore[return-value]  # HTTPError is a response too
    except (urllib.error.URLError, OSError):
        return None


def answers(address: str) -> bool:
    """Whether the Docker registry API (v2) answers at ``host:port``."""
    response = _request(f"http://{address}/v2/", timeout=2.0)
    return response is not None and bool(response.headers.get("Docker-Distribution-Api-Version"))


class Registry:
    """The registry at ``address``; started from ``binary`` for the block when nothing answers."""

    def __init__(self, address: str, storage: Path, binary: str | None) -> None:
        self.address = address
        self.storage = Path(storage)
        self.binary = binary
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Registry:
        if answers(self.address):
            return self
        if not is_loopback(self.address):
            raise SetupError(
                f"no Docker registry answers at {self.address}; start one there "
                "or configure a loopback address (traj2env starts its own)"
            )
        if self.binary is None:
            raise SetupError("no Docker registry program found; install Debian's docker-registry")
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self, wait: float = 15.0) -> None:
        assert self.binary is not None
        self.storage.mkdir(parents=True, exist_ok=True)
        config = self.storage.parent / "registry.yml"
        config.write_text(
            CONFIG.format(
                storage=self.storage.resolve(), address=self.address, secret=secrets.token_hex(16)
            )
        )
        log = self.storage.parent / "registry.log"
        with log.open("ab") as sink:
            self._process = subprocess.Popen(
                [self.binary, "serve", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + wait
        while not answers(self.address):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = log.read_text(errors="replace")[-2000:]
                raise SetupError(
                    f"the registry did not start at {self.address} (port taken?); "
                    f"its log ({log}) ends:\n{tail}"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def manifest_digest(self, repository: str, tag: str) -> str | None:
        """The digest of ``repository:tag`` in this registry, or None when it has no such tag."""
        response = _request(
            f"http://{self.address}/v2/{repository}/manifests/{tag}",
            method="HEAD",
            accept=", ".join(MANIFEST_TYPES),
        )
        if response is None or response.status != 200:
            return None
        with contextlib.closing(response):
            return response.headers.get("Docker-Content-Digest")
