"""Reading a Harbor task folder written by ``taskfiles``: what the trial layer needs of it."""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from groundwork.core.docker import FileEntry

from ..mining.files import is_project_source
from .probeset import ProbeSet


class TaskFolderError(ValueError):
    """The folder is not a task the trial layer can run (missing file, missing check)."""


@dataclass(frozen=True, slots=True)
class TaskSpec:
    task_dir: Path
    name: str
    project_dir: str  # where the project lives in the image (/app)
    command: str  # the recorded check, with the project root already rewritten
    workdir: str  # absolute folder the check starts in
    language: str
    runner: str
    check_timeout: float
    cpus: float
    memory_mb: int
    solve_sh: bytes
    # [environment.env]: what the agent's container starts with (TRAJ2ENV_SERVICES names the
    # services its image's entrypoint starts); the services the grader starts for the check.
    env: Mapping[str, str] = field(default_factory=dict)
    services: tuple[str, ...] = ()
    # The starting files as laid into the image (environment/project), VCS internals and
    # installed dependencies left out: the agent's starting state.
    start_files: Mapping[str, FileEntry] = field(default_factory=dict)
    # tests/: test.sh, grading.json and the grader (uploaded to /tests in the verifier).
    tests_files: Mapping[str, FileEntry] = field(default_factory=dict)
    family: str = "repair"  # task.toml's [metadata] family: which controls and rules apply

    @property
    def context(self) -> Path:
        return self.task_dir / "environment"

    @property
    def workdir_rel(self) -> str:
        """The check's folder relative to the project ("." for the project itself)."""
        rel = os.path.relpath(self.workdir, self.project_dir)
        return "." if rel == os.curdir else rel

    def start_bytes(self) -> dict[str, bytes]:
        return {path: entry.data for path, entry in self.start_files.items()}


def read_task(task_dir: Path | str) -> TaskSpec:
    """The task at ``task_dir``; TaskFolderError when it is not a runnable repair task."""
    root = Path(task_dir)
    toml_path = root / "task.toml"
    try:
        config = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TaskFolderError(f"{toml_path}: {exc}") from None
    metadata = config.get("metadata") or {}
    check = metadata.get("check")
    if not isinstance(check, dict) or not isinstance(check.get("command"), str):
        raise TaskFolderError(
            f"{toml_path} has no [metadata.check] command; rewrite the task with write_task"
        )
    artifacts = config.get("artifacts") or []
    if len(artifacts) != 1 or not isinstance(artifacts[0], str) or not artifacts[0].startswith("/"):
        raise TaskFolderError(f"{toml_path}: expected one absolute project folder in artifacts")
    project_dir = artifacts[0].rstrip("/")
    workdir = str(check.get("workdir") or project_dir)
    if workdir != project_dir and not workdir.startswith(project_dir + "/"):
        raise TaskFolderError(f"{toml_path}: the check's folder {workdir} is outside {project_dir}")
    solve = root / "solution" / "solve.sh"
    if not solve.is_file() or not (root / "environment" / "Dockerfile").is_file():
        raise TaskFolderError(f"{root}: needs solution/solve.sh and environment/Dockerfile")
    if not (root / "tests" / "grading.json").is_file():
        raise TaskFolderError(
            f"{root}: no tests/grading.json (written by an older traj2env); rewrite the task"
        )
    environment = config.get("environment") or {}
    task = config.get("task") or {}
    return TaskSpec(
        task_dir=root,
        name=str(task.get("name") or root.name),
        project_dir=project_dir,
        command=check["command"],
        workdir=workdir,
        language=str(check.get("language") or "unknown"),
        runner=str(check.get("runner") or "unknown"),
        check_timeout=float(check.get("timeout_sec") or 600),
        cpus=float(environment.get("cpus") or 1),
        memory_mb=int(environment.get("memory_mb") or 2048),
        solve_sh=solve.read_bytes(),
        env={str(k): str(v) for k, v in (environment.get("env") or {}).items()},
        services=tuple(str(s) for s in check.get("services") or ()),
        start_files=read_tree(root / "environment" / "project"),
        tests_files=read_tree(root / "tests"),
        family=str(metadata.get("family") or "repair"),
    )


@dataclass(frozen=True, slots=True)
class ReferenceFacts:
    """What the check did inside the image, which grading needs beyond the task's files."""

    passed: Mapping[str, int]  # real test id -> times it passed on the reference
    start_failed: tuple[str, ...] = ()  # tests that pass on the reference but not the start
    # Tests whose verbatim copy passed ("copyable") and whose falsified copy failed
    # ("mutable") on the reference: what the grader may copy as controls.
    controls: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The hidden equivalence probes (tests/probes.json, root's alone): grading.json says only
    # how many there are and the file's sha256, so a file dropped or changed scores 0.
    probes: ProbeSet | None = None

    def grading(self) -> dict[str, object]:
        """The grading.json entries for these facts."""
        return {
            "reference_passed": dict(sorted(self.passed.items())),
            "start_failed": sorted(self.start_failed),
            "reference_controls": {k: sorted(v) for k, v in sorted(self.controls.items())},
            "probes": (self.probes or ProbeSet()).record(),
        }


def record_reference(task_dir: Path | str, facts: ReferenceFacts) -> None:
    """Write what the check did inside the image into tests/grading.json.

    The task's grader then fails a submission on which a test that passed on the reference
    vanished or was skipped, as the trial matrix does, and copies the tests that behaved as
    controls. Written atomically; the rest of the file is kept as it was.
    """
    path = Path(task_dir) / "tests" / "grading.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    entries = facts.grading()
    if all(config.get(k) == v for k, v in entries.items()):
        return
    config.update(entries)
    text = json.dumps(config, indent=1, sort_keys=True, ensure_ascii=True) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".grading-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def read_tree(folder: Path) -> dict[str, FileEntry]:
    """Regular files under ``folder`` by relative POSIX path; symlinks are not followed."""
    files: dict[str, FileEntry] = {}
    if not folder.is_dir():
        return files
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink() or not path.is_file() or not is_project_source(rel):
                continue
            files[rel] = FileEntry(path.read_bytes(), executable=os.access(path, os.X_OK))
    return files
