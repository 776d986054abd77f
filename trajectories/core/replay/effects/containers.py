"""Containers: ``docker``/``podman`` commands that may write the project through a bind mount.

Building, inspecting and managing images and containers leaves the project alone; ``docker cp``
into a container writes there; anything that runs a container (``run``, ``exec``, ``compose``)
may write through whatever the project mounted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import LostTree
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell

_DOCKER_READ_ONLY = set(
    """
    ps images logs inspect version info build pull stats top network volume image system buildx
    login tag push history events port search stop kill rm rmi start restart pause unpause context
    """.split()
)


@handles("docker", "podman")
def docker(sh: Shell, call: Call) -> Handled:
    values = [v for v in call.args[1:] if not v.startswith("-")]
    sub = values[0] if values else ""
    if sub in _DOCKER_READ_ONLY:
        return call.cwd, None
    if sub == "cp":
        dst = values[-1] if len(values) >= 3 else ""
        if ":" in dst:
            return call.cwd, None
    sh.emit(LostTree(call.cwd, f"docker {sub} may write through mounts"))
    return call.cwd, None
