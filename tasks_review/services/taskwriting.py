"""The write stage: a proposed candidate becomes a Harbor task folder, checked by Harbor itself."""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from tasks_review.core.images import variants_for
from tasks_review.core.mining.candidate import RepairCandidate
from tasks_review.core.mining.drops import DropReason
from tasks_review.core.taskfiles import (
    SecretInReference,
    SourceTrace,
    TaskWriteError,
    check_workdir,
    write_task,
)
from tasks_review.core.taskimage import PythonPackages, TaskDependencies
from tasks_review.core.tasksecrets import redaction_counts
from tasks_review.core.trials.crates import vendor_crates
from tasks_review.core.trials.deps import needs_go, python_requirements
from tasks_review.core.trials.fetching import Fetch, Unavailable
from tasks_review.core.trials.gomodules import fetch_go_modules
from tasks_review.core.trials.npmdeps import fetch_npm_packages
from tasks_review.core.trials.wheelhouse import WheelhouseUnavailable, build_wheelhouse
from tasks_review.models import Candidate
from tasks_review.services.images import NoBaseImage, base_image_ref, base_is_public
from trajectories.models import Trajectory
from trajectories.store import DbBlobs

STAGE = "write"


def candidate_payload(candidate: RepairCandidate) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(candidate)))


def candidate_from_payload(payload: dict[str, Any]) -> RepairCandidate:
    fields = {f.name: f for f in dataclasses.fields(RepairCandidate)}
    values = {
        k: tuple(v) if isinstance(v, list) and "tuple" in str(fields[k].type) else v
        for k, v in payload.items()
        if k in fields
    }
    return RepairCandidate(**values)


def lint_problems(task_dir: Path) -> list[str]:
    """What Harbor's own Task model and `harbor lint --select ALL` say about a task folder."""
    from harbor.lint import lint_task
    from harbor.models.task.task import Task

    problems = []
    try:
        Task(task_dir)
    except Exception as exc:  # Harbor raises pydantic and OS errors alike
        problems.append(f"Harbor's Task model rejects it: {exc}")
    for finding in lint_task(task_dir):
        problems.append(f"{finding.rule}: {finding.message}")
    return problems


def image_variants(mined: RepairCandidate, blobs: DbBlobs) -> tuple[str, ...]:
    """The base image variants the candidate's check needs (Go, services beside it)."""
    files = {path: blobs.get(sha) for path, sha in mined.start_files.items()}
    workdir = Path(check_workdir(mined)).relative_to(mined.project_dir).as_posix()
    return variants_for(
        language=mined.language,
        services=mined.services,
        go_project=needs_go(files, mined.task_command, workdir),
    )


def _source_trace(candidate: Candidate, mined: RepairCandidate) -> SourceTrace:
    trajectory = candidate.trajectory
    clone = (candidate.payload or {}).get("clone") or {}
    return SourceTrace.for_candidate(
        trajectory.source.sha256,
        mined,
        twins=tuple(s.sha256 for s in trajectory.twin_sources.order_by("id")),
        clone={"commit": clone["commit"], "how": clone.get("how", "")}
        if clone.get("commit")
        else None,
    )


def candidate_write_task(
    *, candidate: Candidate, destination: Path, task_name: str, base_image: str
) -> bool:
    """Write the task, lint it, and record the outcome on the row. False when dropped.

    ``base_image`` is the default base's FROM reference; a candidate that needs Go, Rust or
    services is written FROM the variant of it that has them (built offline the first time),
    unless a public image is configured, which serves every candidate. Its dependencies are
    fetched first (``task_dependencies``); when they cannot be had the candidate drops with
    ``dependency_unavailable_offline``, saying from which source and why.
    """
    mined = candidate_from_payload(candidate.payload)
    trajectory = candidate.trajectory
    task_dir = destination / task_name
    blobs = DbBlobs()
    public = base_is_public()
    variants = () if public else image_variants(mined, blobs)
    if variants:
        try:
            base_image = base_image_ref(variants)
        except NoBaseImage as exc:
            _drop(candidate, "dependency_unavailable_offline", str(exc))
            return False
    try:
        dependencies = task_dependencies(mined, trajectory, blobs)
    except (WheelhouseUnavailable, Unavailable) as exc:
        _drop(candidate, "dependency_unavailable_offline", str(exc))
        return False
    try:
        write_task(
            task_dir,
            mined,
            mined.instruction,
            blobs,
            source_trace=_source_trace(candidate, mined),
            source_model=trajectory.model_name or None,
            base_image=base_image,
            task_name=f"traj2env/{task_name}",  # Harbor names tasks org/name
            overwrite=True,
            dependencies=dependencies,
            public_base=public,
        )
    except SecretInReference as exc:
        _drop(candidate, str(DropReason.SECRET_IN_REFERENCE), str(exc))
        return False
    except TaskWriteError as exc:
        _drop(candidate, "write_refused", str(exc))
        return False
    problems = lint_problems(task_dir)
    if problems:
        shutil.rmtree(task_dir, ignore_errors=True)
        _drop(candidate, "harbor_lint_failed", "; ".join(problems))
        return False
    # Secrets replaced in the task's files, by type, for the reviewer's page (the task's own
    # count is in its task.toml); a re-write replaces the previous count.
    payload = {k: v for k, v in candidate.payload.items() if k != "redactions"}
    redactions = redaction_counts(task_dir)
    if redactions:
        payload["redactions"] = {"total": sum(redactions.values()), "counts": redactions}
    packages = dependencies.python
    if packages is not None:
        # What the image installs, for the reviewer's page (the task folder has the lock).
        pins = [line.split(" ", 1)[0] for line in packages.lock.splitlines() if line.strip()]
        payload["python_packages"] = {
            "pins": pins,
            "resolved_before": packages.resolved_before,
            "date_source": packages.date_source,
        }
    others = [
        {"kind": kind, "pins": list(pins), "source": source, "pinned_by": pinned_by}
        for kind, pins, source, pinned_by in (
            ("npm", *_pins(dependencies.node, "packages", "registry")),
            ("Go", *_pins(dependencies.go, "modules", "source")),
            ("Rust", *_pins(dependencies.crates, "crates", "source")),
        )
        if pins
    ]
    if others:
        payload["dependencies"] = others
    Candidate.objects.filter(id=candidate.id).update(
        status=Candidate.Status.WRITTEN,
        task_name=task_name,
        task_dir=str(task_dir),
        payload=payload,
    )
    return True


def task_dependencies(
    mined: RepairCandidate, trajectory: Trajectory, blobs: DbBlobs
) -> TaskDependencies:
    """What the task's image installs besides the starting files, each fetched the way the
    user's own tools fetch it: Python wheels (PyPI as on the trajectory's date), npm packages
    (the user's registry; the lock, or npm's ``--before`` the date), Go modules (the user's
    GOPROXY, pinned by go.sum), crates (the user's Cargo registry; Cargo.lock, or the date).
    WheelhouseUnavailable or Unavailable when some cannot be had (offline, unreachable, or
    not there), naming the source."""
    if mined.family == "qa":
        return TaskDependencies()  # its grader runs nothing of the project
    files = {path: blobs.get(sha) for path, sha in mined.start_files.items()}
    workdir = Path(check_workdir(mined)).relative_to(mined.project_dir).as_posix()
    before, date_source = _trajectory_date(trajectory)
    conf = settings.TRAJ2ENV
    cache = Path(conf["DEPENDENCY_CACHE_DIR"])
    offline = conf["DEPENDENCIES_OFFLINE"]
    # Each ecosystem for the checks that run it: a Python check in a repository with a web
    # front end does not need its npm packages.
    node, go, rust = (
        mined.language == "node",
        needs_go(files, mined.task_command, workdir),
        mined.language == "rust",
    )
    return TaskDependencies(
        python=python_packages(files, workdir, mined.task_command, before, date_source),
        node=fetch_npm_packages(files, workdir, Fetch(before, cache / "npm", offline))
        if node
        else None,
        go=fetch_go_modules(files, workdir, Fetch(before, cache / "go", offline)) if go else None,
        crates=vendor_crates(files, workdir, Fetch(before, cache / "crates", offline))
        if rust
        else None,
    )


def _pins(found: object, pins: str, source: str) -> tuple[tuple[str, ...], str, str]:
    """(pins, source, what pinned them) of one ecosystem's fetch, for the reviewer's page."""
    if found is None:
        return (), "", ""
    pinned_by = getattr(found, "date_source", "go.sum")
    return tuple(getattr(found, pins)), str(getattr(found, source)), pinned_by


def _trajectory_date(trajectory: Trajectory) -> tuple[datetime, str]:
    if trajectory.started_at is not None:
        return trajectory.started_at, "trajectory"
    return timezone.now(), "unknown: the trajectory has no start time"


def python_packages(
    files: dict[str, bytes], workdir: str, command: str, before: datetime, date_source: str
) -> PythonPackages | None:
    """The project's Python dependencies (and the check's runner) as wheels, resolved as PyPI
    was at ``before``. None when it needs none; WheelhouseUnavailable when they cannot be had
    (offline, or no wheel of a matching version existed then)."""
    requirements = python_requirements(files, command, workdir)
    if not requirements:
        return None
    house = build_wheelhouse(
        requirements,
        before=before,
        cache_dir=settings.TRAJ2ENV["WHEELHOUSE_DIR"],
        offline=settings.TRAJ2ENV["WHEELHOUSE_OFFLINE"],
    )
    return PythonPackages(
        requirements=tuple(requirements),
        lock=house.lock,
        wheels=house.wheels,
        resolved_before=house.resolved_before.isoformat(),
        date_source=date_source,
    )


def _drop(candidate: Candidate, reason: str, detail: str) -> None:
    Candidate.objects.filter(id=candidate.id).update(
        status=Candidate.Status.DROPPED, drop_stage=STAGE, drop_reason=reason, drop_detail=detail
    )
