"""Loading the grader kit's modules as the grader does: they import their siblings by bare name
from their own folder (``grade.py`` puts it first on ``sys.path``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

KIT = Path(__file__).resolve().parents[5] / "tasks_review" / "core" / "trials" / "kit"


def load(name: str) -> ModuleType:
    """The kit module ``name`` (``cleaning``, ``reports`` ...), its folder on sys.path while it
    loads."""
    sys.path.insert(0, str(KIT))
    try:
        spec = importlib.util.spec_from_file_location(f"traj2env_kit_{name}", KIT / f"{name}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(KIT))


def write(root: Path, rel: str, data: bytes = b"x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
