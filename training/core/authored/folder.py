"""Reading a user-authored Harbor task folder, and every reason it cannot be an authored task.

    spec = read_authored_task(Path("samples/authored/stop-when-credentials-missing"))
    spec.name, spec.project_dir, spec.base_images, spec.named
    unavailable_images(spec, engine)      # [] when every FROM image is in this Docker engine

``read_authored_task`` raises ``AuthoredTaskInvalid`` with one line per problem, all of them at
once, so an author fixes the folder in one pass. What is checked, and why:

* Harbor's own ``Task`` model loads it and ``harbor lint`` finds nothing with every rule on but
  ``unpinned-image``. That rule asks for an ``@sha256:`` digest so that a registry cannot serve
  other bytes later; here nothing is ever pulled, so ``unavailable_images`` replaces it with a
  stricter check: every ``FROM`` names an image already present in the engine that grades the
  task (our base image by its pinned digest, or by its recipe tag, which names its content).
* ``environment/Dockerfile``, ``solution/solve.sh`` and ``tests/test.sh`` are there, with no
  compose file, prebuilt image, verifier image of its own, steps or Windows target: the matrix
  builds one image and runs every agent and every verifier in fresh containers of it.
* ``[environment] network_mode = "no-network"`` with no phase asking for more: trials run
  offline and a task that needs a network would be graded on something else than it says.
* Exactly one artifact, an absolute folder: the project that crosses to the verifier.
* No ``${...}`` in any ``env`` table: Harbor fills those from the host's environment, and a
  task's output (its logs) is shown on pages.
* Regular files only, within a size bound: the folder is copied into the store as it is.
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from harbor.lint import LintRule, lint_task
from harbor.models.task.config import ArtifactConfig, NetworkMode, TaskConfig, TaskOS
from harbor.models.task.file_filter import TaskFileFilter
from harbor.models.task.paths import TaskPaths
from harbor.models.task.task import Task
from harbor.models.trial.paths import EnvironmentPaths

from groundwork.core.docker import FileEntry

if TYPE_CHECKING:
    from groundwork.core.docker import Engine

MAX_FILES = 5000
MAX_BYTES = 100 << 20
MAX_NAMED = 200
DEFAULT_AGENT_SECONDS = 600.0  # Harbor has no default; a trial must end
MAX_SECONDS = 1800.0
MAX_CPUS = 1.0  # as in the mined tasks' matrix: two cores, many trials
MAX_MEMORY_MB = 2048
# Replaced by unavailable_images (see the module docstring).
LINT_RULES = frozenset(LintRule) - {LintRule.UNPINNED_IMAGE}
PATHS = EnvironmentPaths.for_os(TaskOS.LINUX)
_PROTECTED = ("/logs", str(PATHS.tests_dir), str(PATHS.solution_dir))
_PATH_CHARS = r"[A-Za-z0-9_.+@%=,-]"


class AuthoredTaskInvalid(ValueError):
    """The folder is not an authored task this installation can verify; ``problems`` says why."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(problems))


@dataclass(frozen=True, slots=True)
class AuthoredSpec:
    task_dir: Path
    name: str
    instruction: str
    project_dir: str  # the one artifact: what crosses from the agent to the verifier
    workdir: str | None  # [environment] workdir; None: the image's WORKDIR
    agent_user: str | None  # None: the image's USER, as Harbor does
    verifier_user: str | None
    agent_seconds: float
    verifier_seconds: float
    build_seconds: float
    cpus: float
    memory_mb: int
    base_images: tuple[str, ...] = ()  # what environment/Dockerfile builds FROM
    # Absolute paths inside the project that the tests name: what the tests may read there.
    named: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # [environment] env: every container
    solution_env: Mapping[str, str] = field(default_factory=dict)
    verifier_env: Mapping[str, str] = field(default_factory=dict)
    solution_files: Mapping[str, FileEntry] = field(default_factory=dict)
    tests_files: Mapping[str, FileEntry] = field(default_factory=dict)

    @property
    def context(self) -> Path:
        return self.task_dir / "environment"


def read_authored_task(task_dir: Path | str) -> AuthoredSpec:
    """The task at ``task_dir``; AuthoredTaskInvalid lists every problem found."""
    root = Path(task_dir)
    if not root.is_dir():
        raise AuthoredTaskInvalid([f"{root} is not a folder (give a Harbor task folder)"])
    root = root.resolve()
    problems = _tree_problems(root)
    problems += _layout_problems(root)
    problems += _lint_problems(root)
    task = _task(root, problems)
    if task is None:
        raise AuthoredTaskInvalid(problems)
    config = task.config
    problems += _config_problems(config)
    project = _project_dir(config, problems)
    base_images = _base_images(root / "environment" / "Dockerfile", problems)
    if problems:
        raise AuthoredTaskInvalid(problems)
    tests = _selected(task, task.paths.tests_dir)
    return AuthoredSpec(
        task_dir=root,
        name=config.task.name if config.task else root.name,
        instruction=_text(task.paths.instruction_path),
        project_dir=project,
        workdir=config.environment.workdir,
        agent_user=_user(config.agent.user),
        verifier_user=_user(config.verifier.user),
        agent_seconds=min(config.agent.timeout_sec or DEFAULT_AGENT_SECONDS, MAX_SECONDS),
        verifier_seconds=min(config.verifier.timeout_sec, MAX_SECONDS),
        build_seconds=min(config.environment.build_timeout_sec, MAX_SECONDS),
        cpus=min(float(config.environment.cpus or MAX_CPUS), MAX_CPUS),
        memory_mb=min(int(config.environment.memory_mb or MAX_MEMORY_MB), MAX_MEMORY_MB),
        base_images=base_images,
        named=named_paths(tests, project),
        env=dict(config.environment.env),
        solution_env=dict(config.solution.env),
        verifier_env=dict(config.verifier.env),
        solution_files=_selected(task, task.paths.solution_dir),
        tests_files=tests,
    )


def unavailable_images(spec: AuthoredSpec, engine: Engine) -> list[str]:
    """The FROM images this engine lacks, as problems (it never pulls, so the build would fail).

    Raises InfraError when the engine cannot be asked.
    """
    problems = []
    for ref in spec.base_images:
        if ref.lower() != "scratch" and engine.image(ref) is None:
            problems.append(
                f"environment/Dockerfile: FROM {ref}: no such image in this Docker engine, "
                "which never pulls; build FROM the base image (`manage.py images list` shows "
                "its pinned reference) or load the image first"
            )
    return problems


def named_paths(tests: Mapping[str, FileEntry], project: str) -> tuple[str, ...]:
    """Absolute paths inside ``project`` written out in the tests (deepest first).

    Only literal absolute paths are seen: ``$APP/x`` or a path built at run time is not. A
    control rewrites these to find tests that trust what the agent controls.
    """
    pattern = re.compile(rf"(?<![\w/.-]){re.escape(project)}((?:/{_PATH_CHARS}+)+)")
    found: set[str] = set()
    for entry in tests.values():
        text = entry.data.decode("utf-8", "replace")
        for match in pattern.finditer(text):
            rel = match.group(1).rstrip(".,")
            parts = PurePosixPath(rel).parts[1:]
            if parts and not {".", ".."} & set(parts):
                found.add(project + "/" + "/".join(parts))
    ordered = sorted(found, key=lambda p: (-p.count("/"), p))
    return tuple(ordered[:MAX_NAMED])


# -- checks ---------------------------------------------------------------------------------------


def _tree_problems(root: Path) -> list[str]:
    problems = []
    files = size = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"{rel} is a symbolic link: a task folder holds regular files")
            elif stat.S_ISREG(mode):
                files += 1
                size += path.lstat().st_size
            elif not stat.S_ISDIR(mode):
                problems.append(f"{rel} is not a regular file or folder")
    if files > MAX_FILES or size > MAX_BYTES:
        problems.append(
            f"the folder holds {files} files, {size} bytes: more than {MAX_FILES} files or "
            f"{MAX_BYTES >> 20} MB"
        )
    return problems


def _lint_problems(root: Path) -> list[str]:
    try:
        findings = lint_task(root, selected_rules=set(LINT_RULES))
    except Exception as exc:  # operational errors: unreadable files, compose checks without compose
        return [f"harbor lint could not check the folder: {exc}"]
    problems = []
    for finding in findings:
        where = Path(finding.path)
        rel = where.relative_to(root).as_posix() if where.is_relative_to(root) else str(where)
        line = f":{finding.line}" if finding.line else ""
        problems.append(f"harbor lint {finding.rule} ({rel}{line}): {finding.message}")
    return problems


def _task(root: Path, problems: list[str]) -> Task | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return Task(root)
    except Exception as exc:  # Harbor raises pydantic, TOML and OS errors alike
        first = str(exc).strip().splitlines()[:3]
        problems.append(f"Harbor's Task model refuses the folder: {' '.join(first)[:400]}")
        return None


def _layout_problems(root: Path) -> list[str]:
    problems = []
    paths, ignored = TaskPaths(root), TaskFileFilter(root)
    required = {
        "instruction.md": paths.instruction_path,
        "environment/Dockerfile": paths.environment_dir / "Dockerfile",
        "solution/solve.sh": paths.solution_dir / "solve.sh",
        "tests/test.sh": paths.tests_dir / "test.sh",
    }
    for rel, path in required.items():
        if not path.is_file():
            problems.append(f"{rel} is missing")
        elif ignored.is_excluded(path):
            problems.append(f"{rel} is excluded by a .harborignore")
    if paths.instruction_path.is_file() and not _text(paths.instruction_path).strip():
        problems.append("instruction.md is empty: the agent needs to be told what to do")
    for rel in ("environment/docker-compose.yaml", "environment/docker-compose.yml"):
        if (root / rel).exists():
            problems.append(f"{rel}: one container per trial here, not a compose project")
    if (paths.tests_dir / "Dockerfile").exists():
        problems.append(
            "tests/Dockerfile: the verifier runs in a fresh container of the task's own image "
            "here; a verifier image of its own is not supported"
        )
    return problems


def _config_problems(config: TaskConfig) -> list[str]:
    problems = []
    environment, verifier = config.environment, config.verifier
    if config.steps:
        problems.append("task.toml has steps: multi-step tasks are not supported")
    if environment.os != TaskOS.LINUX:
        problems.append(f"[environment] os = {environment.os.value!r}: only linux runs here")
    if environment.docker_image:
        problems.append(
            "[environment] docker_image: the image is built from environment/Dockerfile; "
            "drop the prebuilt reference"
        )
    if environment.gpus or environment.tpu:
        problems.append("[environment] asks for GPUs or TPUs, which trials here do not have")
    if environment.network_mode != NetworkMode.NO_NETWORK:
        problems.append(
            f'[environment] network_mode = "{environment.network_mode.value}": set '
            '"no-network"; authored tasks are verified and run offline'
        )
    for section, policy in (("agent", config.agent), ("verifier", verifier)):
        if policy.network_mode not in (None, NetworkMode.NO_NETWORK):
            problems.append(f"[{section}] network_mode asks for a network; trials have none")
    if verifier.environment is not None:
        problems.append(
            "[verifier.environment]: the verifier runs in the task's own image here; drop it"
        )
    tables = {
        "environment": environment.env,
        "verifier": verifier.env,
        "solution": config.solution.env,
    }
    for section, env in tables.items():
        templated = sorted(k for k, v in env.items() if "${" in v)
        if templated:
            problems.append(
                f"[{section}] env {', '.join(templated)}: ${{...}} would be filled from this "
                "host's environment; give literal values"
            )
    return problems


def _project_dir(config: TaskConfig, problems: list[str]) -> str:
    artifacts = config.artifacts
    source: Any = artifacts[0] if len(artifacts) == 1 else None
    if isinstance(source, ArtifactConfig):
        plain = not (source.destination or source.exclude or source.service)
        source = source.source if plain else None
    if not isinstance(source, str) or not source.startswith("/") or source.rstrip("/") == "":
        problems.append(
            "task.toml: artifacts must be exactly one absolute folder, the project the agent "
            'works in (artifacts = ["/app"]): it is what crosses to the verifier'
        )
        return ""
    project = "/" + "/".join(PurePosixPath(source).parts[1:])
    if any(project == p or project.startswith(p + "/") for p in _PROTECTED):
        problems.append(f"artifacts: {project} is one of Harbor's own folders; choose another")
    return project


_FROM = re.compile(r"^\s*FROM\s+(.*)$", re.IGNORECASE)


def _base_images(dockerfile: Path, problems: list[str]) -> tuple[str, ...]:
    """The images ``FROM`` names, in order (earlier build stages are not images)."""
    if not dockerfile.is_file():
        return ()
    text = dockerfile.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ")
    images: list[str] = []
    stages: set[str] = set()
    for line in text.splitlines():
        match = _FROM.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        words = [w for w in match.group(1).split() if not w.startswith("--")]
        if not words:
            continue
        ref = words[0]
        if "$" in ref:
            problems.append(f"environment/Dockerfile: FROM {ref}: name the image, not a variable")
        elif ref.lower() not in stages and ref not in images:
            images.append(ref)
        if len(words) == 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
    if not images and not problems:
        problems.append("environment/Dockerfile has no FROM")
    return tuple(images)


def _selected(task: Task, folder: Path) -> dict[str, FileEntry]:
    """The folder's files as Harbor uploads them (its .harborignore applied)."""
    selection = task.file_filter.select(folder)
    files = {}
    for rel in sorted(selection.relative_paths):
        path = folder / rel
        if path.is_file() and not path.is_symlink():
            files[rel.as_posix()] = FileEntry(path.read_bytes(), os.access(path, os.X_OK))
    return files


def _user(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")
