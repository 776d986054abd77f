"""What the Harbor tests share: `harbor run` through our environment, run ids, what a run left
behind, and Harbor's coroutines run from a test whatever else the test worker runs.

A browser test earlier in the same xdist worker leaves Playwright's event loop running in the
main thread, where ``asyncio.run`` then refuses to start; a thread of its own has no loop.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from groundwork.core.docker import Engine
from groundwork.core.docker import docker_labels as lbl
from tests.conftest import REPO, subprocess_env

ENVIRONMENT = "training.core.harbor.environment:OfflineDockerEnvironment"
SAMPLES = ("claude-code", "codex")  # a unittest project and an npm test one


def new_run_id(what: str) -> str:
    return f"test-harbor-{what}-{uuid.uuid4().hex[:8]}"


def left_behind(engine: Engine, run_id: str) -> list[str]:
    return [c.name for c in engine.containers(label=f"{lbl.RUN}={run_id}")]


def run_coroutine[T](coroutine: Coroutine[Any, Any, T]) -> T:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="harbor-test") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def harbor_run(
    tasks: Path, agent: str, jobs: Path, run_id: str, *more: str, job_name: str | None = None
) -> subprocess.CompletedProcess:
    """``harbor run`` of ``agent`` on ``tasks`` through our environment; ``more``: its options
    (``--ak KEY=VALUE`` ...)."""
    harbor = Path(sys.executable).with_name("harbor")
    return subprocess.run(
        [
            str(harbor),
            "run",
            "-p",
            str(tasks),
            "-a",
            agent,
            "--env",
            ENVIRONMENT,
            "--ek",
            f"run_id={run_id}",
            "-o",
            str(jobs),
            "--job-name",
            job_name or agent,
            "-n",
            "2",
            "-q",
            *more,
        ],
        # harbor imports the environment from this checkout; litellm must not go online.
        env=subprocess_env(PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True"),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
