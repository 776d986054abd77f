"""The interpreter the generated hooks run under: a user's python3, outside our virtualenv."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from training.core.forbidden import _TEMP as TEMPORARY

VAR = Path(__file__).resolve().parents[4] / "var" / "hook-trials"
if str(VAR).startswith(TEMPORARY):  # a checkout in /tmp: the trials need a folder outside it
    VAR = Path.home() / ".cache" / "traj2env-hook-trials"

# The machine's own python3 first: pyenv's shim answers too, but at half a second a call.
CANDIDATES = ("/usr/bin/python3", shutil.which("python3"))


@pytest.fixture(scope="session")
def python3() -> str:
    """A python3 (3.11 or newer) that cannot import the project: the hooks must not need it."""
    for candidate in CANDIDATES:
        if not candidate or not os.access(candidate, os.X_OK):
            continue
        probe = subprocess.run(
            [candidate, "-I", "-c", "import sys; print(sys.version_info >= (3, 11))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.stdout.strip() == "True":
            return os.path.realpath(candidate)
    pytest.skip("no python3 3.11 or newer outside the virtualenv")


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A trial's folder outside /tmp, where the rules let deletions through (see ``try_hook``)."""
    VAR.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=VAR))
    yield path
    shutil.rmtree(path, ignore_errors=True)
