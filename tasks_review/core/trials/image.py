"""A task's image, built once (cached by content), and checked for what the check runs.

    prepared = prepare(task_dir, engine)   # PreparedTask; .drop when it cannot run offline
    prepared.image.image_id, prepared.limits

Dropped before any trial (``dependency_unavailable_offline``) when the project declares
dependencies the task does not carry (``deps``: wheels, npm cache, Go proxy folder, crates), or the
built image lacks a program or Python module the check runs, a service it needs (Redis,
PostgreSQL) or a Go as new as its go.mod asks for.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from groundwork.core.docker import BuiltImage, Engine, InfraError, Limits

from .deps import (
    Dependency,
    OfflineSources,
    declared_dependencies,
    go_version_required,
    needs_go,
    unavailable,
)
from .model import TrialDrop, TrialDropReason
from .plan import Requirement, plan_check
from .taskdir import TaskSpec, read_task

# Containers for trials get at most this, whatever task.toml asks: the matrix runs many of
# them, on machines with two cores.
MAX_CPUS = 1.0
MAX_MEMORY_MB = 2048
# What a service needs in the image (kit/servers.py starts it from these).
SERVICE_PROBES = {
    "redis": "command -v redis-server",
    "postgresql": "ls /usr/lib/postgresql/*/bin/postgres && test -d /var/lib/traj2env/postgresql",
}


@dataclass(frozen=True, slots=True)
class PreparedTask:
    spec: TaskSpec
    image: BuiltImage | None  # None when dropped before the build
    limits: Limits
    dependencies: tuple[Dependency, ...] = ()
    drop: TrialDrop | None = None
    seconds: float = 0.0


def task_limits(spec: TaskSpec) -> Limits:
    return Limits(
        cpus=min(spec.cpus, MAX_CPUS),
        memory_bytes=min(spec.memory_mb, MAX_MEMORY_MB) << 20,
        pids=512,
        timeout=spec.check_timeout,
    )


def prepare(
    task_dir: Path | str,
    engine: Engine,
    *,
    sources: OfflineSources = OfflineSources(),  # noqa: B008 - frozen, so one shared default is safe
    run_id: str = "prepare",
) -> PreparedTask:
    """Build the task's image once (cached by content) and check that what it needs is there.

    Drops (``dependency_unavailable_offline``) when the project declares dependencies the
    offline sources lack, before building, or when the built image lacks a program or Python
    module the check runs. InfraError when the build or the engine fails: the caller records
    the candidate as ungraded.
    """
    started = time.monotonic()
    spec = read_task(task_dir)
    # What the task carries (wheels, npm cache, Go proxy folder, crates) is its source, unless
    # the caller names another.
    carried = OfflineSources.of_context(spec.context)
    sources = dataclasses.replace(
        carried,
        **{
            f.name: getattr(sources, f.name)
            for f in dataclasses.fields(sources)
            if getattr(sources, f.name) is not None
        },
    )
    limits = task_limits(spec)
    files = spec.start_bytes()
    # A qa task's grader runs nothing of the project: what it declares is the agent's to use
    # (or not), never a reason the task cannot be graded offline.
    dependencies = () if spec.family == "qa" else tuple(declared_dependencies(files))
    missing = unavailable(dependencies, sources)
    if missing:
        detail = "; ".join(f"{dep}: {why}" for dep, why in missing[:5])
        missing_drop = TrialDrop(TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE, detail, "prepare")
        return PreparedTask(
            spec, None, limits, dependencies, missing_drop, time.monotonic() - started
        )
    image = engine.build(spec.context)
    plan = plan_check(spec.command, spec.workdir_rel, files)
    go = go_version_required(files) if needs_go(files, spec.command, spec.workdir_rel) else None
    lacking = probe(
        engine,
        spec,
        image.image_id,
        plan.requirements,
        run_id=run_id,
        limits=limits,
        services=spec.services,
        go=go,
    )
    drop: TrialDrop | None = None
    if lacking:
        drop = TrialDrop(
            TrialDropReason.DEPENDENCY_UNAVAILABLE_OFFLINE,
            "the check needs "
            + ", ".join(lacking)
            + ", which the image lacks and no offline source provides",
            "prepare",
        )
    return PreparedTask(spec, image, limits, dependencies, drop, time.monotonic() - started)


def probe(
    engine: Engine,
    spec: TaskSpec,
    image: str,
    requirements: Sequence[Requirement],
    *,
    run_id: str,
    limits: Limits,
    services: Sequence[str] = (),
    go: str | None = None,
) -> list[str]:
    """The requirements the image does not meet, e.g. ``python module pytest``, ``service
    redis``, ``go 1.24 or newer`` (``go``: the newest ``go`` line of the project's go.mod)."""
    if not requirements and not services and go is None:
        return []
    lines = []
    for req in requirements:
        folder = shlex.quote(f"{spec.project_dir}/{req.cwd}")
        name = shlex.quote(req.name)
        enter = f"cd {folder} 2>/dev/null || cd {shlex.quote(spec.project_dir)}"
        if req.kind == "module":
            python = shlex.quote(req.python)
            test = (
                f'{python} -c "import importlib.util, sys; '
                f'sys.exit(importlib.util.find_spec(sys.argv[1]) is None)" {name}'
            )
            lines.append(f"({enter}; {test}) >/dev/null 2>&1 || echo 'python module {req.name}'")
        else:
            # npm puts node_modules/.bin first on PATH for scripts, the project's own and the
            # task's (/node_modules, npmdeps) above it.
            test = f'PATH="$PWD/node_modules/.bin:/node_modules/.bin:$PATH" command -v {name}'
            lines.append(f"({enter}; {test}) >/dev/null 2>&1 || echo 'program {req.name}'")
    for name in services:
        test = SERVICE_PROBES.get(name, "false")
        lines.append(f"({test}) >/dev/null 2>&1 || echo {shlex.quote(f'service {name}')}")
    if go is not None:
        # Offline, with GOTOOLCHAIN=local, a go.mod asking for a newer Go cannot build.
        need = shlex.quote(go)
        have = "$(go env GOVERSION 2>/dev/null | sed 's/^go//; s/[^0-9.].*//')"
        lines.append(
            f'have={have}; [ -n "$have" ] && '
            f'[ "$(printf \'%s\\n\' {need} "$have" | sort -V | head -n1)" = {need} ] '
            f"|| echo {shlex.quote(f'go {go} or newer')}"
        )
    with engine.sandbox(image, run_id=run_id, limits=limits) as box:
        done = box.exec(["sh", "-c", "\n".join(lines)], timeout=120)
    if done.timed_out or done.exit_code != 0:
        raise InfraError(f"probing the image for the check's tools failed: {done.stderr[-500:]}")
    return [line for line in done.stdout.splitlines() if line.strip()]
