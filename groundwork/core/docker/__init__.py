"""The Docker layer: offline base images, content-cached builds and sandboxes. No Django here.

    from groundwork.core.docker import BaseImageSpec, Engine, InfraError, Limits, bootstrap

    engine = Engine.from_env()                       # DOCKER_HOST & co.; InfraError if unreachable
    base = bootstrap(BaseImageSpec(cache_dir=var / "cache"), engine=engine)
    # task Dockerfiles: f"FROM {base.pinned_ref}"
    image = engine.build(context_dir)                # once per content, then reused
    with engine.sandbox(image.image_id, run_id="trial-42", limits=Limits(timeout=120)) as box:
        box.put_files("/workspace", {"main.py": b"..."})
        result = box.exec("python3 -m pytest -q")    # ExecResult: exit code, output, timed_out
        box.stop()
        submission = box.copy_out("/workspace")      # regular files only, size-limited

Only ``engine``, ``sandbox`` and ``sdk`` import the Docker SDK.
"""

from .archive import ArchiveTooLarge, Extracted, FileEntry, Refusal
from .base import BaseImageSpec, ImageRecord, bootstrap
from .engine import BuiltImage, CleanupReport, ContainerInfo, Engine, ImageInfo
from .errors import InfraError, SetupError
from .sandbox import ExecResult, Limits, Sandbox

__all__ = [
    "ArchiveTooLarge",
    "BaseImageSpec",
    "BuiltImage",
    "CleanupReport",
    "ContainerInfo",
    "Engine",
    "ExecResult",
    "Extracted",
    "FileEntry",
    "ImageInfo",
    "ImageRecord",
    "InfraError",
    "Limits",
    "Refusal",
    "Sandbox",
    "SetupError",
    "bootstrap",
]
