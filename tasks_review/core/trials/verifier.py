"""The separate verifier: a submission graded by the task's own grader, as Harbor grades it.

The separate verifier grades a submission the way Harbor's ``environment_mode = "separate"``
does, and with the task's own grader, so what the matrix verified is what Harbor will run:

1. A **fresh container of the pristine image** (the candidate's own, network off, limits on).
2. The project folder is emptied except for ``.git``; the **submission** (regular files
   copied out of the stopped agent container, size-limited, symlinks refused, VCS internals
   and dependency folders left behind) is written in.
3. The task's ``tests/`` goes to ``/tests`` (root-owned) and ``tests/test.sh`` runs as root:
   ``grader/grade.py`` cleans and restores the project, runs the recorded check **as
   ``grader``** (never the uid the agent had) through the grader kit (instrumented runners
   reporting over a socket only root reads, with control copies of the real tests), kills
   what the check left running, judges and writes ``reward.txt``.
4. The container is stopped and ``/logs/verifier`` copied out: the session records are judged
   **again in this process** (``results.judge_graded_run``, the same rules), and a task grader
   that disagrees with the harness scores 0.

The check in the image (``baseline.check_in_image``) is this same verifier on the starting files
and on the reference, with no reference facts yet (``facts=None``).

Why grader and not agent: nothing in the verifier's container belongs to the grader user
before grading starts, so no file the image gave the agent (its home, its caches) is
writable by the process being graded.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from groundwork.core.docker import (
    ArchiveTooLarge,
    Engine,
    ExecResult,
    Extracted,
    FileEntry,
    InfraError,
    Limits,
)
from groundwork.core.docker.engine import AGENT_UID, Sandbox

from ..mining.files import is_project_source
from .answers import is_answer_task, judge_answer
from .model import trim
from .plan import GradingPlan
from .probeset import PROBES_FILE
from .results import Judgement, judge_graded_run, read_probe_results, read_sessions
from .taskdir import ReferenceFacts, TaskFolderError, TaskSpec

SOLUTION_DIR = "/traj2env-solution"
SUBMISSION_MAX_BYTES = 32 << 20
SUBMISSION_MAX_ENTRIES = 20_000
RESULTS_MAX_BYTES = 32 << 20
TESTS_DIR = "/tests"  # where Harbor uploads tests/ in the verifier
STAGING = "/traj2env-submission"  # a new top-level folder: /tmp's own mode must stay 1777
VERIFIER_DIR = "/logs/verifier"
# Folders of the pristine project the verifier keeps: the fresh repository and what the
# build installed. The submission's own copies of them never cross.
_KEPT_IN_IMAGE = (".git", "node_modules", ".venv", "venv")


@dataclass(frozen=True, slots=True)
class Submission:
    """The project files that cross from the agent's container, and what was left behind."""

    files: Mapping[str, FileEntry] = field(default_factory=dict)
    refused: tuple[str, ...] = ()  # symlinks, special files
    left_behind: int = 0  # VCS internals and dependency folders
    problem: str | None = None  # the project is gone or too large: graded 0


def put_solution(box: Sandbox, spec: TaskSpec) -> None:
    solve = FileEntry(spec.solve_sh, executable=True)
    box.put_files("/", {f"{SOLUTION_DIR[1:]}/solve.sh": solve}, owner=(AGENT_UID, AGENT_UID))


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
        ["/usr/bin/find", folder, "-mindepth", "1", "-maxdepth", "1", "-printf", "%f\\0"],
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


@dataclass(frozen=True, slots=True)
class Graded:
    verdict: Judgement
    result: ExecResult
    logs: str
    detail: Mapping[str, Any]


def grading_files(spec: TaskSpec, facts: ReferenceFacts | None) -> dict[str, FileEntry]:
    """The task's tests/ folder with grading.json as this grading needs it: the reference's
    facts filled in, or none (the check in the image itself)."""
    files = dict(spec.tests_files)
    try:
        config = json.loads(files["grading.json"].data)
    except (KeyError, ValueError) as exc:
        raise TaskFolderError(f"{spec.task_dir}/tests/grading.json: {exc}") from None
    for key in ("reference_passed", "start_failed", "reference_controls", "probes"):
        config.pop(key, None)
    files.pop(PROBES_FILE, None)
    if facts is not None:
        config.update(facts.grading())
        data = facts.probes.to_bytes() if facts.probes is not None else None
        if data is not None:
            # Root's alone from the moment it lands, before grade.py locks the folder too.
            files[PROBES_FILE] = FileEntry(data, private=True)
    # The check the matrix runs is the task's; task.toml and grading.json carry the same one.
    config.update(command=spec.command, workdir=spec.workdir)
    files["grading.json"] = FileEntry(json.dumps(config, sort_keys=True).encode())
    return files


def grade_submission(
    engine: Engine,
    spec: TaskSpec,
    image: str,
    submission: Submission,
    *,
    facts: ReferenceFacts | None,
    plan: GradingPlan,
    run_id: str,
    limits: Limits,
) -> Graded:
    """The separate verifier (see the module docstring). InfraError: ungraded."""
    tests = grading_files(spec, facts)
    # One archive and one command: the task's tests/ and the submission go in together, then
    # the project is emptied (its fresh repository kept), the submission moved in, and the
    # task's own grader run. Round trips are most of a trial's fixed cost.
    staged = {f"{TESTS_DIR.lstrip('/')}/{name}": entry for name, entry in tests.items()}
    staged.update({f"{STAGING.lstrip('/')}/{p}": e for p, e in submission.files.items()})
    project = shlex.quote(spec.project_dir)
    # Root runs this: every program by absolute path (no PATH lookup, as in test.sh).
    script = (
        f"/bin/mkdir -p {project} && cd {project} "
        "&& /usr/bin/find . -mindepth 1 -maxdepth 1 ! -name .git -exec /bin/rm -rf {} + "
        f"&& if [ -d {STAGING} ]; then /bin/cp -a {STAGING}/. . && /bin/rm -rf {STAGING}; fi "
        f"|| {{ echo 'traj2env: laying the submission down failed' >&2; exit 99; }}\n"
        f"exec /bin/bash {TESTS_DIR}/test.sh\n"
    )
    with engine.sandbox(image, run_id=run_id, user="grader", limits=limits) as box:
        box.put_files("/", staged, owner=(0, 0))
        ran = box.exec(["/bin/sh", "-c", script], user="root", timeout=spec.check_timeout + 120)
        if ran.exit_code == 99:
            raise InfraError(f"the verifier could not lay the submission down: {ran.stderr[-500:]}")
        if ran.timed_out:
            raise InfraError(f"the task's grader ran past {spec.check_timeout + 120:.0f} s")
        if box.alive:
            box.stop()
        copied = copy_results(box, VERIFIER_DIR)
    logs = trim(f"$ {spec.command}\n{ran.stdout}{ran.stderr}")
    return judge_results(copied, logs, tests, submission, facts=facts, plan=plan)


def judge_results(
    copied: Mapping[str, FileEntry],
    logs: str,
    tests: Mapping[str, FileEntry],
    submission: Submission,
    *,
    facts: ReferenceFacts | None,
    plan: GradingPlan,
) -> Graded:
    """The verdict on what the task's grader left in the verifier folder (``copied``), judged
    again here; ``tests``: the grading files it ran with. InfraError when it wrote none."""
    outcome = _grader_outcome(copied, logs)
    check = ExecResult(
        exit_code=outcome.get("exit_code"),
        stdout="",
        stderr="",
        seconds=float(outcome.get("seconds") or 0.0),
        timed_out=bool(outcome.get("timed_out")),
    )
    # The parent judges the session records again, by the same rules: the task's own grader
    # and the harness must agree, or the task is not what the matrix verified. The findings
    # (shadowing modules, files changed during the check) only root in the container can see.
    config = json.loads(tests["grading.json"].data)
    # The probes' outcomes root's grader recorded, judged again against the reference's.
    probes = (
        facts.probes.check(read_probe_results(copied))
        if facts is not None and facts.probes is not None
        else None
    )
    unprobed = None
    if is_answer_task(config):  # qa: the answer file among the bytes that crossed
        verdict = judge_answer(submission.files, config)
    else:

        def judged(probes: Mapping[str, Any] | None) -> Judgement:
            return judge_graded_run(
                check,
                read_sessions(copied),
                plan,
                reference=facts.passed if facts is not None else None,
                findings=[str(f) for f in outcome.get("findings") or ()],
                baseline=facts is None,
                reward=str(config.get("reward") or "all"),
                start_failed=facts.start_failed if facts is not None else (),
                probes=probes,
            )

        verdict = judged(probes)
        # What the check and its tripwires alone gave (verifier v2's verdict): evidence of
        # what the probes decided.
        unprobed = judged(None).reward if probes is not None else verdict.reward
    # Both files, as Harbor reads them (reward.json first): a planted one must not stand.
    written = (_reward_txt(copied), _reward_json(copied), outcome["reward"])
    if any(value != verdict.reward for value in written):
        verdict = dataclasses.replace(
            verdict,
            reward=0.0,
            reasons=(
                *verdict.reasons,
                f"the task's grader wrote reward {written[0]} (reward.json {written[1]}) where "
                f"the harness judged {verdict.reward}",
            ),
        )
    detail = {
        "grading": verdict.grading,
        "reasons": list(verdict.reasons),
        "score": dict(verdict.score),
        "check": verdict.detail,
        "probes": probes,
        "reward_without_probes": unprobed,
        "probe_seconds": outcome.get("probe_seconds"),
        "submission": {
            "files": len(submission.files),
            "refused": list(submission.refused[:20]),
            "left_behind": submission.left_behind,
            "restored": list(outcome.get("restored") or [])[:20],
            "removed": list(outcome.get("removed") or [])[:20],
        },
    }
    return Graded(verdict, check, logs, detail)


def _grader_outcome(copied: Mapping[str, FileEntry], logs: str) -> dict[str, Any]:
    entry = copied.get("traj2env/verdict.json")
    try:
        outcome = json.loads(entry.data) if entry else None
    except ValueError:
        outcome = None
    if not isinstance(outcome, dict) or "reward" not in outcome or "error" in outcome:
        why = (outcome or {}).get("error") if isinstance(outcome, dict) else None
        raise InfraError(f"the task's grader failed: {why or 'no verdict written'}", log=logs)
    return outcome


def _reward_txt(copied: Mapping[str, FileEntry]) -> float | None:
    entry = copied.get("reward.txt")
    try:
        return float(entry.data.decode().strip()) if entry else None
    except ValueError:
        return None


def _reward_json(copied: Mapping[str, FileEntry]) -> float | None:
    """``reward.json``'s reward, which Harbor reads before ``reward.txt``."""
    entry = copied.get("reward.json")
    try:
        data = json.loads(entry.data) if entry else None
    except ValueError:
        return None
    value = data.get("reward") if isinstance(data, dict) and len(data) == 1 else None
    return float(value) if isinstance(value, int | float) else None
