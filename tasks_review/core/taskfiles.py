"""Writing a repair candidate as a Harbor task folder.

    <dest>/
      instruction.md          the request and the failing check, never the fix
      task.toml               Harbor TaskConfig (schema 1.4), validated by Harbor's own model
      environment/Dockerfile  FROM the pinned base image; the starting files in one layer
      environment/project/    the starting files (build context only)
      environment/repository.tar  their fresh git repository (.git, one synthetic commit)
      environment/wheels/ node/ goproxy/ crates/   the project's dependencies, when it needs
                              any, fetched as its own tools fetch them (taskimage.py)
      tests/test.sh           the grader's entry point (Harbor runs it as root)
      tests/grading.json      the check, the reference's test files, the runners and rules
      tests/grader/           grade.py and the kit: restore, run as grader, judge, reward
      solution/solve.sh       the oracle: turns the starting files into the reference, exactly

Choices, and why:

* **Separate verifier, built from the task's own image.** ``[verifier] environment_mode =
  "separate"`` and no ``tests/Dockerfile``: Harbor then builds the verifier from
  ``environment/`` (the pristine image) and uploads ``tests/`` at grading time, so grading
  inputs never enter the agent's image. The agent's project crosses as the ``/app`` artifact
  (Harbor empties ``/app`` in the verifier and uploads the submission there, dropping symlinks
  that leave it). A ``tests/Dockerfile`` would need the starting files a second time in its
  own build context and buys nothing here.
* **The grader does not trust the submission, and is the matrix's own.** ``grader/grade.py``
  (standard library only; see ``trials/kit/grade.py``) removes symlinks, caches, dependency
  folders, start-up hooks and files a runner would discover as tests that the reference
  lacks, puts the test files and test configuration back to the reference's bytes, runs the
  check as an unprivileged ``grader`` user through instrumented runners that report over a
  socket only root reads, with control copies of the real tests (verbatim, or with an
  assertion made false) planned per grading, kills what it left running, and judges by
  ``judging.py``, the rules the trial matrix applies (the matrix grades every trial
  with this very ``test.sh``). It writes ``reward.json`` (Harbor prefers it over
  ``reward.txt``) and ``reward.txt``, each anew, never through a link. The price: an agent
  whose own fix needed a different package.json (or other test configuration) than the
  reference's is graded with the reference's.
* **The project lives at ``/app``.** The recorded root differs per machine (and names people's
  home folders); the candidate's ``task_command`` already has it rewritten.
* **Exact bytes for any name.** File contents travel base64-encoded in quoted here-documents
  and names are shell-quoted, so any bytes and any file name (spaces, quotes, newlines,
  non-UTF-8 content) survive; nothing is a patch.
* **Safe output.** Every relative path is checked before anything is written, files are
  created with ``O_EXCL | O_NOFOLLOW`` inside a fresh temporary folder that is renamed into
  place, no symlinks are made, and modes are 0644 for files and 0755 for scripts and folders
  whatever the umask. The same candidate always gives the same bytes. A project file named
  ``.harborignore`` is refused: Harbor would read it as task configuration.
* **No secret leaves the trajectory.** The instruction and every text file of the starting
  project go through the one redactor (``trajectories.core.redact``; a file with a NUL byte is
  binary and stays as it is); ``task.toml`` records how many replacements of each type were
  made (``metadata.redaction``). What the verifier grades must keep its exact bytes, so a
  credential in the check's command, in a file the oracle writes or in a reference file the
  grader restores refuses the task (``SecretInReference``) instead of being redacted.
* **Fresh repository, pinned base, one layer.** The repository (one commit of the starting
  files, fixed author and date, no upstream history) is made on the host (``gitrepo``) and
  laid down with the files in one ``ADD``, owned by the agent: traj2env's base image already
  runs as ``agent`` in ``/app``, and every extra build step would cost a container commit. On
  a public base image (``public_base``) the Dockerfile switches to root, creates ``agent``
  when the image lacks it, gives it the files and ends as ``agent``.
* **Services beside the check.** A candidate whose check needs Redis or PostgreSQL is written
  FROM the ``services`` base image: ``[environment.env]`` names the services its entrypoint
  starts in the agent's container (and a healthcheck has Harbor wait for them), and
  ``grading.json`` names the ones the grader starts, as root, before the check.

``harbor lint --select ALL`` passes on every task written here with no rule ignored: the agent
runs as ``agent`` (root-agent), the verifier is separate (shared-verifier), the base image must
carry an ``@sha256:`` digest (unpinned-image, enforced by ``write_task``), Python packages are
installed at build time from the task's own hash-pinned wheels with ``--no-index``, and no
script downloads anything.

Images need bash, coreutils (base64) and python3 (3.8 or newer, for the grader; 3.11 with venv
when the task carries wheels), and git for the agent: Debian-based Python and Node images have
them. No git runs at build time: the repository arrives made.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harbor.models.task.config import TaskConfig

from groundwork.core.docker.base import DEFAULT_USERS
from trajectories.core.blobs import BlobStore
from trajectories.core.redact import merge_counts, redact, replaced_counts

from .answerfiles import answer_grader_files, launch_grader
from .families.window import names_only
from .gitrepo import repository_tar
from .images import SERVERS_SCRIPT
from .instruction import added_lines, leaks_in
from .mining.files import path_problem
from .mining.repair import RepairCandidate
from .solution import solve_sh
from .taskimage import REPOSITORY_TAR, PythonPackages, TaskDependencies, dockerfile
from .tasksecrets import REDACTION_KEY, graded_secret, redacted_project
from .trials.kit.servers import SERVICES as KNOWN_SERVICES
from .trials.plan import guard_rules, is_discovered, is_guarded, plan_check
from .trials.version import VERIFIER_VERSION

SCHEMA_VERSION = "1.4"
AGENT_USER = "agent"
PIPELINE = "trajectory_to_env"
RECIPE = "trajectory_replay"
# task.toml's one-line description, per family.
DESCRIPTIONS = {
    "repair": "Make the failing check pass: {command}",
    "build": "Build what the request asks for; hidden tests check it: {command}",
    "extend": "Add the requested feature; hidden tests check it: {command}",
    "qa": "Answer a question about the project's data in an answer file",
}
_PINNED = re.compile(r"^[^\s@]+@sha256:[0-9a-f]{64}$")
_PROJECT_DIR = re.compile(r"^/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")


# The agent's uid in traj2env's base images: the owner repository.tar's entries carry.
AGENT_UID = dict(DEFAULT_USERS)[AGENT_USER]


class TaskWriteError(ValueError):
    """The candidate cannot be written safely; nothing was left at the destination."""


class SecretInReference(TaskWriteError):
    """A credential is in what the verifier grades: redacting it would change the task."""


@dataclass(frozen=True, slots=True)
class SourceTrace:
    """Where the task came from: the source file's hash and the steps of the repair; the
    other recordings of the same session (``twins``: a session log's ATIF copy) and the user's
    clone the start was laid over (``clone``: its commit and how it was found), when any."""

    sha256: str
    fail_step_id: Any
    pass_step_id: Any
    fail_command_index: int
    pass_command_index: int
    twins: tuple[str, ...] = ()
    clone: Mapping[str, str] | None = None

    @classmethod
    def for_candidate(
        cls,
        sha256: str,
        candidate: RepairCandidate,
        *,
        twins: tuple[str, ...] = (),
        clone: Mapping[str, str] | None = None,
    ) -> SourceTrace:
        return cls(
            sha256=sha256,
            fail_step_id=candidate.fail_step_id,
            pass_step_id=candidate.pass_step_id,
            fail_command_index=candidate.fail_command_index,
            pass_command_index=candidate.pass_command_index,
            twins=twins,
            clone=clone,
        )

    def to_dict(self) -> dict[str, Any]:
        def plain(value: Any) -> Any:
            return value if isinstance(value, int) and not isinstance(value, bool) else str(value)

        trace: dict[str, Any] = {
            "sha256": self.sha256,
            "steps": [plain(self.fail_step_id), plain(self.pass_step_id)],
            "commands": [self.fail_command_index, self.pass_command_index],
        }
        if self.twins:
            trace["twins"] = list(self.twins)
        if self.clone:
            trace["clone"] = dict(self.clone)
        return trace


def write_task(
    dest_dir: Path | str,
    candidate: RepairCandidate,
    instruction: str,
    blobs: BlobStore,
    *,
    source_trace: SourceTrace,
    source_model: str | None,
    base_image: str,
    check_timeout: int = 600,
    agent_timeout: int = 1800,
    cpus: int = 2,
    memory_mb: int = 4096,
    build_timeout: int = 900,
    task_name: str | None = None,
    overwrite: bool = False,
    python_packages: PythonPackages | None = None,
    dependencies: TaskDependencies | None = None,
    public_base: bool = False,
) -> Path:
    """Write ``candidate`` as a Harbor task at ``dest_dir`` and return that path.

    ``dependencies``: what the image build installs, offline, besides the starting files
    (``taskimage``: Python wheels, npm packages, Go modules, crates), each in its folder of
    ``environment/``; ``python_packages`` is its Python part alone.
    ``public_base``: ``base_image`` is not one of traj2env's base images (which run as
    ``agent`` in ``/app``), so the Dockerfile sets those up itself.
    """
    if not _PINNED.match(base_image):
        raise TaskWriteError(
            f"base image {base_image!r} must be pinned as name@sha256:<64 hex digits>"
        )
    if not _PROJECT_DIR.match(candidate.project_dir) or candidate.project_dir == "/":
        raise TaskWriteError(f"unsafe project directory {candidate.project_dir!r}")
    _check_paths(candidate)
    unknown = sorted(set(candidate.services) - set(KNOWN_SERVICES))
    if unknown:
        raise TaskWriteError(f"no image provides the services {unknown}")
    if not instruction.strip():
        raise TaskWriteError("the instruction is empty")
    secret = graded_secret(candidate, blobs)
    if secret:
        raise SecretInReference(secret)
    project, redactions = redacted_project(candidate, blobs)
    # The instruction was built from text redacted before it was cut (trim_text): its tokens,
    # not this last pass's finds alone, say what it lost.
    shown = redact(instruction)
    redactions = merge_counts([redactions, replaced_counts(shown.value)])

    files: dict[str, tuple[bytes, int]] = {}
    dependencies = dependencies or TaskDependencies()
    if python_packages is not None:
        dependencies = dataclasses.replace(dependencies, python=python_packages)
    docker = dockerfile(
        candidate.project_dir,
        base_image,
        dependencies,
        public_base=public_base,
        has_files=bool(project),
    )
    toml_text = _task_toml(
        candidate,
        source_trace=source_trace,
        source_model=source_model,
        check_timeout=check_timeout,
        agent_timeout=agent_timeout,
        cpus=cpus,
        memory_mb=memory_mb,
        build_timeout=build_timeout,
        task_name=task_name,
        dependencies=dependencies,
        redactions=redactions,
    )
    # Everything written outside environment/project is generated text: none of it may carry a
    # line the fix added (the project itself is the starting state, which cannot).
    added = added_lines(candidate.start_files, candidate.ref_files, blobs)
    # build/extend: a test's line that only lists interface names (``    API_PATH,``) is what
    # the instruction must name, not a leak (families/window.py).
    interface = candidate.family_facts.get("interface") or ()
    added = [line for line in added if not names_only(line, interface)]
    leaked = leaks_in([instruction, docker, toml_text], added)
    if leaked:
        raise TaskWriteError(f"the task text would leak the fix: {leaked[0][:80]!r}")

    text = shown.value if shown.value.endswith("\n") else shown.value + "\n"
    files["instruction.md"] = (_encode(text, "instruction.md"), 0o644)
    files["task.toml"] = (_encode(toml_text, "task.toml"), 0o644)
    files["environment/Dockerfile"] = (_encode(docker, "Dockerfile"), 0o644)
    for path, data in sorted(project.items()):
        files[f"environment/project/{path}"] = (data, 0o644)
    files[f"environment/{REPOSITORY_TAR}"] = (
        repository_tar(project, uid=AGENT_UID, gid=AGENT_UID, owner=AGENT_USER),
        0o644,
    )
    files.update(dependencies.context_files())
    if candidate.family == "qa":  # an answer file is graded, not a check (answerfiles.py)
        kit = {name: (_KIT / name).read_bytes() for name in GRADER_FILES}
        files.update(answer_grader_files(candidate, check_timeout, kit))
    else:
        files.update(_grader_files(candidate, blobs, check_timeout))
    files["solution/solve.sh"] = (_encode(solve_sh(candidate, blobs), "solve.sh"), 0o755)
    return _materialise(Path(dest_dir), files, overwrite=overwrite)


# -- validation --------------------------------------------------------------------------------


def _check_paths(candidate: RepairCandidate) -> None:
    every = {
        *candidate.start_files,
        *candidate.ref_files,
        *candidate.deleted,
        *candidate.test_paths,
    }
    for path in sorted(every):
        problem = path_problem(path)
        if problem:
            raise TaskWriteError(f"refusing path {path!r}: {problem}")
        if Path(path).name == ".harborignore":
            # Harbor reads these as task-level ignore rules (lint: unused-harborignore).
            raise TaskWriteError(f"refusing path {path!r}: Harbor treats it as task config")
    for files in (candidate.start_files, candidate.ref_files):
        names = set(files)
        for path in names:
            parts = path.split("/")
            for i in range(1, len(parts)):
                if "/".join(parts[:i]) in names:
                    raise TaskWriteError(f"{path!r} needs {'/'.join(parts[:i])!r} as a folder")


# -- task.toml ---------------------------------------------------------------------------------


def _task_toml(
    candidate: RepairCandidate,
    *,
    source_trace: SourceTrace,
    source_model: str | None,
    check_timeout: int,
    agent_timeout: int,
    cpus: int,
    memory_mb: int,
    build_timeout: int,
    task_name: str | None,
    dependencies: TaskDependencies,
    redactions: Mapping[str, int] | None = None,
) -> str:
    command = " ".join(candidate.task_command.split())
    if len(command) > 120:
        command = command[:117] + "..."
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "task": {
            "name": task_name or f"traj2env/{candidate.family}-{candidate.key[:16]}",
            "description": DESCRIPTIONS.get(candidate.family, DESCRIPTIONS["repair"]).format(
                command=command
            ),
            "keywords": sorted({candidate.family, candidate.language, candidate.runner}),
        },
        "metadata": {
            "source_model": source_model or "unknown",
            "family": candidate.family,
            "repo2env": {
                "pipeline": PIPELINE,
                "recipe": RECIPE,
                "reward_kinds": ["test_execution"],
                "reproducibility": {"mode": "inline_dockerfile"},
                "family": candidate.family,
                "source_trace": source_trace.to_dict(),
                "candidate_key": candidate.key,
            },
            # The check as data, for verifiers that run it themselves (the trial matrix):
            # exact, where the description is cut to 120 characters and test.sh is a script.
            "check": {
                "command": candidate.task_command,
                "workdir": check_workdir(candidate),
                "language": candidate.language,
                "runner": candidate.runner,
                "timeout_sec": check_timeout,
            },
            # The grader that kept the task (trials.version): older ones are re-verified.
            "verifier": {"version": VERIFIER_VERSION},
        },
        "verifier": {
            "environment_mode": "separate",
            # The grader restores files and drops to the agent user itself (see test.sh).
            "user": "root",
            "timeout_sec": check_timeout + 120,
        },
        "agent": {"user": AGENT_USER, "timeout_sec": agent_timeout},
        "environment": {
            "network_mode": "no-network",
            "cpus": cpus,
            "memory_mb": memory_mb,
            "build_timeout_sec": build_timeout,
        },
        "artifacts": [candidate.project_dir],
    }
    if candidate.services:
        services = list(dict.fromkeys(candidate.services))
        data["metadata"]["check"]["services"] = services
        # The services base image's entrypoint starts these in the agent's container; Harbor
        # waits for them to answer before the agent starts. The grader starts its own.
        data["environment"]["env"] = {"TRAJ2ENV_SERVICES": ",".join(services)}
        data["environment"]["healthcheck"] = {
            "command": f"/usr/bin/python3 -I {SERVERS_SCRIPT} wait {' '.join(services)}",
            "timeout_sec": 75,
            "interval_sec": 1,
            "start_interval_sec": 1,
        }
    if metadata := dependencies.metadata():
        data["metadata"]["dependencies"] = metadata
    if redactions:
        data["metadata"][REDACTION_KEY] = dict(redactions)
    # Harbor's own model validates the config and Harbor's own writer serialises it.
    return TaskConfig.model_validate(data).model_dump_toml()


def check_workdir(candidate: RepairCandidate) -> str:
    """The absolute folder the recorded check starts in, inside the task's image."""
    project = candidate.project_dir
    return project if candidate.cwd in ("", ".") else f"{project}/{candidate.cwd}"


# -- file text ----------------------------------------------------------------------------------


def _encode(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise TaskWriteError(f"{what} holds text that is not valid Unicode: {exc}") from None


# -- tests/ : the grader ------------------------------------------------------------------------

GRADER_DIR = "tests/grader"
_KIT = Path(__file__).with_name("trials") / "kit"
GRADER_FILES = (
    "grade.py",
    "cleaning.py",
    "restoring.py",
    "running.py",
    "planning.py",
    "reports.py",
    "judging.py",
    "copies.py",
    "traj2env_channel.py",
    "shim.py",
    "unittest_harness.py",
    "pytest_boot.py",
    "traj2env_pytest_controls.py",
    "node_controls.mjs",
    "node_tests.cjs",
    "node_reporter.cjs",
    # A qa task's grader: its answer file judged, nothing run (answerfiles.py).
    "answer_grade.py",
    "answers.py",
    "go_harness.py",
    "cargo_harness.py",
    "servers.py",
    # The hidden equivalence probes: run as the grading user, judged by root (probing.py).
    "probing.py",
    "probe_runner.py",
    "probe_runner.cjs",
    "probe_runner_go.py",
    "probe_runner.go",
    "probe_values.py",
    "probe_values.cjs",
)


def grading_config(candidate: RepairCandidate, blobs: BlobStore, check_timeout: int) -> dict:
    """What ``tests/grader/grade.py`` needs: the check, its folder, the reference's guarded
    files and the files a runner would discover as tests (exact bytes, base64), the runners
    whose reports must appear, the guard rules and the verifier's version.

    ``reference_passed``, ``start_failed`` and ``reference_controls`` (what the check did inside
    the image) are filled in by the trial matrix once the check has run there
    (``trials.taskdir.record_reference``); until then the grader runs as the check in the image.
    """
    project = candidate.project_dir
    where = check_workdir(candidate)
    ref_bytes = {path: blobs.get(sha) for path, sha in candidate.ref_files.items()}
    rel = os.path.relpath(where, project)
    plan = plan_check(candidate.task_command, "." if rel == os.curdir else rel, ref_bytes)
    return {
        "schema": 2,
        "verifier_version": VERIFIER_VERSION,
        "project": project,
        "workdir": where,
        "command": candidate.task_command,
        "timeout": int(check_timeout),
        "structured": sorted(plan.structured),
        "reference": {
            path: base64.b64encode(data).decode("ascii")
            for path, data in sorted(ref_bytes.items())
            if is_guarded(path) or is_discovered(path, candidate.task_command)
        },
        # Every path the reference has: its own modules may bear standard-library names.
        "reference_paths": sorted(ref_bytes),
        "reference_passed": {},
        "rules": guard_rules(candidate.task_command),
        # build and extend: the share of the hidden tests that pass (kit/judging.py).
        **(
            {"reward": candidate.family_facts["reward"]}
            if "reward" in candidate.family_facts
            else {}
        ),
        # Started by the grader before the check, stopped after it (kit/servers.py).
        "services": list(dict.fromkeys(candidate.services)),
    }


def _grader_files(
    candidate: RepairCandidate, blobs: BlobStore, check_timeout: int
) -> dict[str, tuple[bytes, int]]:
    config = grading_config(candidate, blobs, check_timeout)
    files = {f"{GRADER_DIR}/{name}": ((_KIT / name).read_bytes(), 0o644) for name in GRADER_FILES}
    files["tests/grading.json"] = (
        (json.dumps(config, indent=1, sort_keys=True, ensure_ascii=True) + "\n").encode(),
        0o644,
    )
    files["tests/test.sh"] = (_encode(_test_sh(candidate), "tests/test.sh"), 0o755)
    return files


def _test_sh(candidate: RepairCandidate) -> str:
    return f"""#!/bin/bash
# The grader of a repair task (traj2env). Harbor runs it as root in the separate verifier, a
# fresh container of the task's own image, after the agent's {candidate.project_dir} has been
# copied in. grader/grade.py (standard library only) restores the tests and test
# configuration from grading.json, runs the recorded check as an unprivileged user through
# instrumented test runners that report to it test by test, and judges what they reported:
# reward 1 only when the check exits 0, every expected runner reported, the copies of real
# tests it planned as controls came out as they must, nothing was tampered with, and no test
# that passed on the reference is missing.
#
# The check, as recorded, run from {check_workdir(candidate)}:
{_comment(candidate.task_command)}
{launch_grader("grade.py")}"""


def _comment(text: str) -> str:
    return "\n".join(f"#   {line}" for line in text.split("\n"))


# -- writing -----------------------------------------------------------------------------------


def _materialise(dest: Path, files: Mapping[str, tuple[bytes, int]], *, overwrite: bool) -> Path:
    dest = dest.absolute()
    if dest.is_symlink():
        raise TaskWriteError(f"destination {dest} is a symlink")
    if dest.exists():
        if not dest.is_dir():
            raise TaskWriteError(f"destination {dest} exists and is not a folder")
        if any(dest.iterdir()) and not overwrite:
            raise TaskWriteError(f"destination {dest} is not empty")
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        os.chmod(staging, 0o755)
        real_staging = os.path.realpath(staging)
        for relative in sorted(files):
            data, mode = files[relative]
            problem = path_problem(relative)
            if problem:
                raise TaskWriteError(f"refusing path {relative!r}: {problem}")
            target = staging / relative
            if not os.path.realpath(target).startswith(real_staging + os.sep):
                raise TaskWriteError(f"refusing path {relative!r}: leaves the task folder")
            _make_dirs(staging, target.parent)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            finally:
                os.close(fd)
        if dest.exists():
            shutil.rmtree(dest)
        os.rename(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


def _make_dirs(root: Path, directory: Path) -> None:
    missing = []
    current = directory
    while current != root and not current.exists():
        missing.append(current)
        current = current.parent
    if current != root and (current.is_symlink() or not current.is_dir()):
        raise TaskWriteError(f"{current} is not a folder")
    for folder in reversed(missing):
        folder.mkdir()
        os.chmod(folder, 0o755)
