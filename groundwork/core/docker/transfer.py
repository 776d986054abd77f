"""Carrying the pinned base images to another Docker engine (a training host), digests intact.

    records = export_images(engine, Path("base-images.tar"), registry="127.0.0.1:5000")
    # on the other host:
    records = load_images(engine, Path("base-images.tar"))   # FROM <pinned_ref> resolves there

Task Dockerfiles start ``FROM 127.0.0.1:5000/traj2env/base@sha256:<manifest digest>``. A plain
``docker save``/``docker load`` carries the image but not that reference: the engine records a
repository digest only on a push or a pull (see ``registry``), so the build would look for the
image at 127.0.0.1:5000 and fail. So the file carries what a registry holds: ``export_images``
pushes each pinned base image to a throwaway loopback registry and writes its storage to a tar,
with an index of the images; it checks that the push gave the digest the Dockerfiles name (the
layers are compressed again on the push; on one engine that gives the same bytes, measured).
``load_images`` serves that storage from a throwaway registry at the address the references
name and pulls each image by digest, so the engine there records the very reference the
Dockerfiles use. The registry program is Debian's ``docker-registry``, as for ``bootstrap``.
"""

from __future__ import annotations

import json
import socket
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import docker_labels as lbl
from .base import DEFAULT_REGISTRY, DEFAULT_REPOSITORY, Progress, _quiet, ensure_tool
from .engine import Engine
from .errors import SetupError
from .registry import Registry, answers, is_loopback

INDEX = "traj2env-images.json"
STORAGE = "registry"  # the registry's storage folder inside the tar
FORMAT = 1


@dataclass(frozen=True, slots=True)
class CarriedImage:
    tag: str  # repository:tag, as bootstrap tags it
    pinned_ref: str  # registry/repository@sha256:..., as task Dockerfiles name it
    image_id: str

    @property
    def registry(self) -> str:
        return self.pinned_ref.split("/", 1)[0]

    @property
    def repository(self) -> str:
        return self.pinned_ref.split("/", 1)[1].split("@", 1)[0]

    @property
    def digest(self) -> str:
        return self.pinned_ref.split("@", 1)[1]

    def as_json(self) -> dict[str, str]:
        return {"tag": self.tag, "pinned_ref": self.pinned_ref, "image_id": self.image_id}


def pinned_base_images(
    engine: Engine, *, registry: str = DEFAULT_REGISTRY, repository: str = DEFAULT_REPOSITORY
) -> list[CarriedImage]:
    """The base images (the default recipe and its variants) pinned in ``registry``. Images
    built FROM a base inherit its labels but have no digest there, so they are left out."""
    prefix = f"{registry}/{repository}@"
    found = []
    for info in engine.images(labels={lbl.KIND: lbl.KIND_BASE}):
        refs = [ref for ref in info.repo_digests if ref.startswith(prefix)]
        tags = [tag for tag in info.tags if tag.startswith(repository + ":")]
        if refs and tags:
            found.append(CarriedImage(tag=sorted(tags)[0], pinned_ref=refs[0], image_id=info.id))
    return sorted(found, key=lambda image: image.tag)


def _free_loopback() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _registry_binary(progress: Progress) -> str:
    return ensure_tool(("docker-registry", "registry"), "docker-registry", progress)


def export_images(
    engine: Engine,
    path: Path,
    *,
    registry: str = DEFAULT_REGISTRY,
    only: Sequence[str] = (),
    progress: Progress = _quiet,
) -> list[CarriedImage]:
    """Write the pinned base images to ``path`` (a tar): every one, or those ``only`` names by
    tag or pinned reference; refuse when there is none, or a name matches none."""
    images = pinned_base_images(engine, registry=registry)
    if not images:
        raise SetupError(
            f"no base image pinned in {registry} on this engine: run "
            "`python manage.py images bootstrap` first"
        )
    if only:
        unknown = [name for name in only if not any(name in (i.tag, i.pinned_ref) for i in images)]
        if unknown:
            known = ", ".join(image.tag for image in images)
            raise SetupError(f"no pinned base image {', '.join(unknown)} here; there are: {known}")
        images = [image for image in images if image.tag in only or image.pinned_ref in only]
    binary = _registry_binary(progress)
    with tempfile.TemporaryDirectory(prefix="traj2env-export-") as scratch:
        storage = Path(scratch) / "storage"
        address = _free_loopback()
        with Registry(address, storage, binary):
            for image in images:
                progress(f"copying {image.tag} ({image.pinned_ref}) into the file's registry")
                remote = f"{address}/{image.repository}"
                engine.image_tag(image.image_id, remote, "export")
                try:
                    digest = engine.image_push(remote, "export")
                finally:
                    engine.image_remove(f"{remote}:export")
                if digest != image.digest:
                    raise SetupError(
                        f"pushing {image.tag} again gave digest {digest}, not {image.digest}: "
                        "this engine compresses its layers differently now. Copy the registry "
                        "folder (TRAJ2ENV_CACHE_DIR/registry) to the other host instead"
                    )
        index = {"format": FORMAT, "images": [image.as_json() for image in images]}
        (Path(scratch) / INDEX).write_text(json.dumps(index, indent=2) + "\n")
        partial = path.with_name(path.name + ".partial")
        with tarfile.open(partial, "w") as tar:
            tar.add(Path(scratch) / INDEX, arcname=INDEX)
            tar.add(storage, arcname=STORAGE)
        partial.replace(path)  # only a complete file is ever found at path
    return images


def _read_index(tar: tarfile.TarFile) -> list[CarriedImage]:
    try:
        member = tar.getmember(INDEX)
        handle = tar.extractfile(member)
        document: Any = json.loads(handle.read() if handle else b"")
        images = [
            CarriedImage(tag=str(i["tag"]), pinned_ref=str(i["pinned_ref"]), image_id=i["image_id"])
            for i in document["images"]
        ]
    except (KeyError, TypeError, ValueError):
        raise SetupError(f"not a file of `images export`: no readable {INDEX}") from None
    if document.get("format") != FORMAT or not images:
        raise SetupError(f"{INDEX} is not format {FORMAT} or names no image")
    for image in images:
        if not image.pinned_ref.count("@sha256:") == 1 or "/" not in image.pinned_ref:
            raise SetupError(f"{INDEX} names an unpinned reference {image.pinned_ref!r}")
    return images


def load_images(
    engine: Engine,
    path: Path,
    *,
    registry: str | None = None,
    progress: Progress = _quiet,
) -> list[CarriedImage]:
    """Load the images of an ``export_images`` file into ``engine``, each recorded under the
    reference task Dockerfiles name: pulled from a registry at the exported address (or
    ``registry``, which then names references of its own)."""
    try:
        tar = tarfile.open(path)
    except (OSError, tarfile.TarError) as error:
        raise SetupError(f"cannot read {path}: {error}") from None
    with tar, tempfile.TemporaryDirectory(prefix="traj2env-load-") as scratch:
        images = _read_index(tar)
        addresses = {registry or image.registry for image in images}
        if len(addresses) != 1:
            raise SetupError(f"the file's images name several registries: {sorted(addresses)}")
        (address,) = addresses
        if not is_loopback(address):
            raise SetupError(f"the file's images name {address}, not a loopback registry")
        members = [m for m in tar.getmembers() if m.name.startswith(STORAGE + "/")]
        try:
            # The data filter refuses links out of the folder, absolute paths and devices.
            tar.extractall(scratch, members=members, filter="data")
        except (OSError, tarfile.TarError) as error:
            raise SetupError(f"cannot unpack {path}: {error}") from None
        if answers(address):
            raise SetupError(
                f"a registry already answers at {address}: stop it (or give another loopback "
                "address) so that the file's own registry serves the images"
            )
        loaded = []
        with Registry(address, Path(scratch) / STORAGE, _registry_binary(progress)):
            for image in images:
                progress(f"loading {image.tag} as {address}/{image.repository}@{image.digest}")
                info = engine.image_pull(f"{address}/{image.repository}@{image.digest}")
                repository, _, tag = image.tag.rpartition(":")
                engine.image_tag(info.id, repository, tag)
                loaded.append(
                    CarriedImage(
                        tag=image.tag,
                        pinned_ref=f"{address}/{image.repository}@{image.digest}",
                        image_id=info.id,
                    )
                )
    return loaded


__all__: Sequence[str] = (
    "CarriedImage",
    "export_images",
    "load_images",
    "pinned_base_images",
)
