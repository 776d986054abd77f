"""Running the check in a container with the grader kit, and the separate verifier around it.

The separate verifier grades a submission the way Harbor's ``environment_mode = "separate"``
does, with more distrust:

1. A **fresh container of the pristine image** (the candidate's own, network off, limits on).
2. The project folder is emptied except for ``.git`` and installed dependencies, which the
   image's build put there; the **submission** (regular files copied out of the stopped agent
   container, size-limited, symlinks refused, VCS internals and dependency folders left
   behind) is written in, owned by the ``grader`` user.
3. **Tests and test configuration are restored**: every guarded path (``plan.is_guarded``)
   takes the reference's bytes, or is removed when the reference has no such file.
4. The grader kit goes to ``/opt/traj2env-grader``, owned by root: a shim first on PATH that
   sends test runners through instrumented ones (machine-readable results, two contradictory
   control tests), see ``kit/shim.py``.
5. The recorded check runs **as ``grader``** (uid 1001, never the uid the agent had), from
   a root-owned script, under the check's time limit; then the container is stopped, the
   results folder copied out, and ``results.judge`` decides the reward in this process.

Why grader and not agent: nothing in the verifier's container belongs to the grader user
before step 2, so no file the image gave the agent (its home, its caches) is writable by the
process being graded.
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..docker import ArchiveTooLarge, Engine, ExecResult, Extracted, FileEntry, InfraError, Limits
from ..docker.base import PATH as IMAGE_PATH
from ..docker.engine import GRADER_UID, Sandbox
from ..mining.files import is_project_source
from .model import trim
from .plan import GradingPlan, is_guarded
from .results import Verdict, judge, read_reports
from .taskdir import TaskSpec

KIT_DIR = "/opt/traj2env-grader"
RESULTS_DIR = "/tmp/traj2env-results"
SOLUTION_DIR = "/tmp/traj2env-solution"
_KIT_SOURCES = Path(__file__).with_name("kit")
_KIT_FILES = (
    "shim.py",
    "unittest_harness.py",
    "traj2env_pytest_controls.py",
    "node_controls.cjs",
)
_WRAPPED = ("python3", "python", "pytest", "py.test", "node", "nodejs")
SUBMISSION_MAX_BYTES = 32 << 20
SUBMISSION_MAX_ENTRIES = 20_000
RESULTS_MAX_BYTES = 32 << 20
# Folders of the pristine project the verifier keeps: the fresh repository and what the
# build installed. The submission's own copies of them never cross.
_KEPT_IN_IMAGE = (".git", "node_modules", ".venv", "venv")


def nonce() -> str:
    # Hex only: the harness splits control names on "_".
    return secrets.token_hex(6)


@dataclass(frozen=True, slots=True)
class Submission:
    """The project files that cross from the agent's container, and what was left behind."""

    files: Mapping[str, FileEntry] = field(default_factory=dict)
    refused: tuple[str, ...] = ()  # symlinks, special files
    left_behind: int = 0  # VCS internals and dependency folders
    problem: str | None = None  # the project is gone or too large: graded 0


def kit_files(spec: TaskSpec) -> dict[str, FileEntry]:
    files = {name: FileEntry((_KIT_SOURCES / name).read_bytes()) for name in _KIT_FILES}
    for tool in _WRAPPED:
        wrapper = f'#!/bin/sh\nexec {KIT_DIR}/python -I {KIT_DIR}/shim.py {tool} "$@"\n'
        files[f"bin/{tool}"] = FileEntry(wrapper.encode(), executable=True)
    # The check as recorded, from its folder; root-owned, so the graded code cannot edit it.
    check = f"cd {shlex.quote(spec.workdir)} || exit 97\n{spec.command}\n"
    files["check.sh"] = FileEntry(check.encode("utf-8", "surrogateescape"))
    return files


def install_kit(
    box: Sandbox, spec: TaskSpec, *, owner: int, results: tuple[str, ...], then: str = ""
) -> None:
    """Put the kit in place and make one results folder per run, owned by ``owner``.

    ``then`` is more root shell for the same exec: every exec costs a round trip.
    """
    box.put_files(KIT_DIR, kit_files(spec), owner=(0, 0))
    folders = " ".join(shlex.quote(r) for r in results)
    script = (
        "set -e\n"
        'real=$(command -v python3) || { echo "the image has no python3" >&2; exit 3; }\n'
        f'ln -sf "$real" {KIT_DIR}/python\n'
        # python3.11 and friends resolve to the same wrapper as python3.
        "for f in /usr/local/bin/python3.* /usr/bin/python3.*; do\n"
        '  case "$f" in *-config|*\\**) continue ;; esac\n'
        f'  if [ -x "$f" ]; then ln -sf python3 {KIT_DIR}/bin/"${{f##*/}}"; fi\n'
        "done\n"
        f"install -d -o {owner} -g {owner} -m 0700 {folders}\n"
        f"{then}\n"
    )
    done = box.exec(["sh", "-c", script], user="root", timeout=60)
    if not done.ok:
        raise InfraError(f"setting up the grader kit failed: {done.stderr.strip()[-500:]}")


def check_env(*, user: str, results: str, run_nonce: str) -> dict[str, str]:
    return {
        "PATH": f"{KIT_DIR}/bin:{IMAGE_PATH}",
        "HOME": f"/home/{user}",
        "USER": user,
        "LANG": "C.UTF-8",
        "CI": "1",
        "NO_COLOR": "1",
        "TRAJ2ENV_RESULTS": results,
        "TRAJ2ENV_NONCE": run_nonce,
    }


def run_check(
    box: Sandbox, spec: TaskSpec, *, user: str, results: str, run_nonce: str
) -> ExecResult:
    return box.exec(
        ["bash", f"{KIT_DIR}/check.sh"],
        user=user,
        workdir=spec.workdir,
        env=check_env(user=user, results=results, run_nonce=run_nonce),
        timeout=spec.check_timeout,
    )


def copy_results(box: Sandbox, folder: str) -> Mapping[str, FileEntry]:
    try:
        return box.copy_out(folder, max_bytes=RESULTS_MAX_BYTES, max_entries=200).files
    except FileNotFoundError:
        return {}  # the graded code removed it: judged as missing results
    except ArchiveTooLarge:
        return {}


def list_entries(box: Sandbox, folder: str) -> list[str]:
    """Names directly inside ``folder`` (NUL-separated on the wire: any name survives)."""
    listed = box.exec(
        ["find", folder, "-mindepth", "1", "-maxdepth", "1", "-printf", "%f\\0"],
        user="root",
        timeout=60,
    )
    if listed.timed_out:
        raise InfraError("listing the project folder timed out")
    if listed.exit_code != 0:
        return []
    return [n for n in listed.stdout.split("\0") if n and "/" not in n and n not in (".", "..")]


def take_submission(box: Sandbox, project: str, names: list[str]) -> Submission:
    """The project's regular files, entry by entry so installed dependencies are never read.

    ``box`` is stopped: nothing the agent started can still change the files.
    """
    files: dict[str, FileEntry] = {}
    refused: list[str] = []
    left = 0
    budget = SUBMISSION_MAX_BYTES
    for name in sorted(names):
        if name in _KEPT_IN_IMAGE or not is_project_source(f"{name}/x"):
            left += 1
            continue
        try:
            got: Extracted = box.copy_out(
                f"{project}/{name}", max_bytes=max(budget, 1), max_entries=SUBMISSION_MAX_ENTRIES
            )
        except FileNotFoundError:
            continue
        except ArchiveTooLarge as exc:
            return Submission(problem=f"the submission exceeds the size limit ({exc})")
        refused += [f"{name}/{r.path}" if r.path != name else name for r in got.refused]
        for rel, entry in got.files.items():
            path = rel if rel == name else f"{name}/{rel}"
            if is_project_source(path):
                files[path] = entry
            else:
                left += 1
        budget -= got.total_bytes
    return Submission(files=files, refused=tuple(refused), left_behind=left)


def with_reference(
    submission: Mapping[str, FileEntry], reference: Mapping[str, FileEntry]
) -> tuple[dict[str, FileEntry], dict[str, list[str]]]:
    """The submission with every guarded path taken from the reference (or removed)."""
    files = {p: e for p, e in submission.items() if not is_guarded(p)}
    replaced = sorted(p for p in submission if is_guarded(p) and submission[p] != reference.get(p))
    removed = sorted(p for p in submission if is_guarded(p) and p not in reference)
    for path, entry in reference.items():
        if is_guarded(path):
            files[path] = entry
    # A file under a path the reference needs as a folder (or the reverse) cannot be laid
    # down; the reference wins.
    folders = {"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)}
    clashing = sorted(p for p in files if p in folders and not is_guarded(p))
    for path in clashing:
        del files[path]
    return files, {"restored": replaced, "removed": removed, "clashing": clashing}


@dataclass(frozen=True, slots=True)
class Graded:
    verdict: Verdict
    result: ExecResult
    logs: str
    detail: Mapping[str, Any]


def grade_submission(
    engine: Engine,
    spec: TaskSpec,
    image: str,
    submission: Submission,
    *,
    reference_files: Mapping[str, FileEntry],
    reference_passed: Mapping[str, int],
    plan: GradingPlan,
    run_id: str,
    limits: Limits,
) -> Graded:
    """The separate verifier (see the module docstring). InfraError: ungraded."""
    files, restore = with_reference(submission.files, reference_files)
    run_nonce = nonce()
    results = f"{RESULTS_DIR}-{run_nonce}"
    with engine.sandbox(image, run_id=run_id, user="grader", limits=limits) as box:
        keep = " ".join(f"! -name {shlex.quote(n)}" for n in _KEPT_IN_IMAGE)
        project = shlex.quote(spec.project_dir)
        reset = (
            f"cd {project} && find . -mindepth 1 -maxdepth 1 {keep} -exec rm -rf {{}} + "
            f"&& chown {GRADER_UID}:{GRADER_UID} ."
        )
        install_kit(box, spec, owner=GRADER_UID, results=(results,), then=reset)
        box.put_files(spec.project_dir, files, owner=(GRADER_UID, GRADER_UID))
        result = run_check(box, spec, user="grader", results=results, run_nonce=run_nonce)
        if box.alive:
            box.stop()  # nothing the graded code left running may touch the results now
        copied = copy_results(box, results)
    verdict = judge(result, read_reports(copied), plan, run_nonce, reference=reference_passed)
    detail = {
        "grading": verdict.grading,
        "reasons": list(verdict.reasons),
        "check": verdict.detail,
        "submission": {
            "files": len(submission.files),
            "refused": list(submission.refused[:20]),
            "left_behind": submission.left_behind,
            **{k: v[:20] for k, v in restore.items()},
        },
    }
    logs = f"$ {spec.command}\n{result.stdout}{result.stderr}"
    return Graded(verdict, result, trim(logs), detail)
