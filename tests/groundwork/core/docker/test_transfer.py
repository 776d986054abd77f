"""Base images carried between hosts in a file: what the file may hold."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from groundwork.core.docker.errors import SetupError
from groundwork.core.docker.transfer import load_images
from tests.groundwork.core.docker.fakes import NoEngine

DIGEST = "sha256:" + "ab" * 32


# -- images export / load: what a file may hold


def export_file(tmp_path, members: dict[str, bytes], index: object) -> Path:
    path = tmp_path / "images.tar"
    with tarfile.open(path, "w") as tar:
        for name, data in {"traj2env-images.json": json.dumps(index).encode(), **members}.items():
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            tar.addfile(entry, io.BytesIO(data))
    return path


INDEX = {
    "format": 1,
    "images": [
        {
            "tag": "traj2env/base:bookworm-1",
            "pinned_ref": f"127.0.0.1:5000/traj2env/base@{DIGEST}",
            "image_id": "sha256:" + "cd" * 32,
        }
    ],
}


def test_a_file_whose_storage_escapes_its_folder_is_refused(tmp_path):
    path = export_file(tmp_path, {"registry/../../escaped": b"x"}, INDEX)
    with pytest.raises(SetupError, match="cannot unpack"):
        load_images(NoEngine(), path)
    assert not (tmp_path / "escaped").exists()


def test_a_file_naming_an_unpinned_image_is_refused(tmp_path):
    index = {**INDEX, "images": [{**INDEX["images"][0], "pinned_ref": "traj2env/base:latest"}]}
    with pytest.raises(SetupError, match="unpinned"):
        load_images(NoEngine(), export_file(tmp_path, {}, index))


def test_a_file_naming_a_remote_registry_is_refused(tmp_path):
    ref = f"registry.example.com/traj2env/base@{DIGEST}"
    index = {**INDEX, "images": [{**INDEX["images"][0], "pinned_ref": ref}]}
    with pytest.raises(SetupError, match="not a loopback registry"):
        load_images(NoEngine(), export_file(tmp_path, {}, index))
