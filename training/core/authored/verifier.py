"""The separate verifier of an authored task: its own ``tests/test.sh``, on Harbor's contract.

    scored = grade_app(engine, spec, image, submission, run_id="authored-7", limits=limits)
    scored.reward        # 1.0, 0.0 ...; None when test.sh gave no reward (scored.problem says why)

As Harbor grades with ``[verifier] environment_mode = "separate"``, and nothing the agent's
container did can reach it:

1. A fresh container of the pristine task image, with no network (the Docker seam's sandbox).
2. ``/logs/verifier`` emptied and opened to every user, the project folder emptied and the
   submission laid into it: only regular files that crossed from the stopped agent container
   (``tasks_review.core.trials.verifier.take_submission``: no symlinks, no special files,
   within a size limit). Version-control internals and installed dependency folders never
   cross, as for mined tasks (a forged history must not pass for the fixture's); the pristine
   image's own stay. Harbor's own collection also carries ``.git``'s files, so a task whose
   tests trust git history may get another reward from Harbor, which the rollout shows.
3. The task's ``tests/`` (as Harbor uploads it, ``.harborignore`` applied) copied fresh to
   ``/tests`` and ``tests/test.sh`` run as the task's verifier user (the image's USER when it
   names none), with ``[verifier] env``, its output in ``/logs/verifier/test-stdout.txt``.
4. The container stopped, which kills whatever the tests or the submission left running, and
   ``/logs/verifier`` copied out of it: ``reward.json``'s ``reward`` if it is there (Harbor reads
   it first), else ``reward.txt``. The reward comes from that container only.

A test.sh that writes no reward, or runs past ``[verifier] timeout_sec``, gives no reward
(Harbor records an error there, never a number). Docker failing raises ``InfraError``:
ungraded.
"""

from __future__ import annotations

import json
import math
import shlex
import time
from collections.abc import Mapping

from groundwork.core.docker import Engine, FileEntry, InfraError, Limits
from tasks_review.core.mining.files import DEPENDENCY_DIRS, VCS_DIRS
from tasks_review.core.trials.model import trim
from tasks_review.core.trials.runner import Scored
from tasks_review.core.trials.verifier import STAGING, Submission, copy_results

from .folder import PATHS, AuthoredSpec

TESTS_DIR = str(PATHS.tests_dir)
VERIFIER_DIR = str(PATHS.verifier_dir)
LOG_DIRS = (str(PATHS.agent_dir), VERIFIER_DIR, str(PATHS.artifacts_dir))
STDOUT = f"{VERIFIER_DIR}/test-stdout.txt"
# Top-level folders of the pristine project that stay: what never crosses (see the docstring).
KEPT_IN_IMAGE = tuple(sorted(VCS_DIRS | DEPENDENCY_DIRS))


def image_user(engine: Engine, image: str) -> str:
    """The image's USER, which Harbor runs a phase as when the task names no user."""
    info = engine.image(image)
    return (info.user if info else "") or "root"


def grade_app(
    engine: Engine,
    spec: AuthoredSpec,
    image: str,
    submission: Submission,
    *,
    run_id: str,
    limits: Limits,
) -> Scored:
    """Grade ``submission`` (the project's files) by the task's own tests; InfraError: ungraded."""
    started = time.monotonic()
    user = spec.verifier_user or image_user(engine, image)
    staged: dict[str, FileEntry] = {
        f"{TESTS_DIR.lstrip('/')}/{name}": entry for name, entry in spec.tests_files.items()
    }
    staged.update({f"{STAGING.lstrip('/')}/{p}": e for p, e in submission.files.items()})
    with engine.sandbox(
        image, run_id=run_id, user=user, limits=limits, workdir=spec.workdir, env=spec.env or None
    ) as box:
        # One archive in and one root command: round trips are most of a trial's fixed cost.
        box.put_files("/", staged, owner=(0, 0))
        laid = box.exec(["sh", "-c", _lay_down(spec.project_dir)], user="root", timeout=120)
        if laid.exit_code != 0:
            raise InfraError(
                f"the verifier could not lay the submission down: {laid.stderr[-500:]}"
            )
        ran = box.exec(
            ["bash", "-c", f"({TESTS_DIR}/test.sh) > {STDOUT} 2>&1"],
            user=user,
            env=dict(spec.verifier_env) or None,
            timeout=spec.verifier_seconds,
        )
        if box.alive:
            box.stop()
        copied = copy_results(box, VERIFIER_DIR)
    rewards, problem = read_rewards(copied)
    if ran.timed_out:
        rewards, problem = {}, f"tests/test.sh ran past its {spec.verifier_seconds:.0f} s limit"
    output = copied.get("test-stdout.txt")
    logs = trim(
        f"$ {TESTS_DIR}/test.sh (exit {ran.exit_code})\n"
        + (output.data.decode("utf-8", "replace") if output else "")
        + ran.stderr
    )
    detail = {
        "reasons": [problem] if problem else [],
        "rewards": dict(rewards),
        "test_exit_code": ran.exit_code,
        "verifier_seconds": round(time.monotonic() - started, 3),
        "submission": {
            "files": len(submission.files),
            "refused": list(submission.refused[:20]),
            "left_behind": submission.left_behind,
        },
    }
    if problem:
        # As Harbor, which records a verifier error and no reward: nothing to score.
        return Scored(None, logs, detail, f"the task's tests/test.sh gave no reward: {problem}")
    return Scored(rewards["reward"], logs, detail)


def _lay_down(project: str) -> str:
    keep = " ".join(f"! -name {shlex.quote(name)}" for name in KEPT_IN_IMAGE)
    folder = shlex.quote(project)
    dirs = " ".join(shlex.quote(d) for d in LOG_DIRS)
    return (
        "set -e\n"
        f"rm -rf {shlex.quote(VERIFIER_DIR)}\n"
        f"mkdir -p {dirs} && chmod 777 {dirs}\n"
        f"mkdir -p {folder} && cd {folder}\n"
        f"find . -mindepth 1 -maxdepth 1 {keep} -exec rm -rf {{}} +\n"
        f"if [ -d {STAGING} ]; then cp -a {STAGING}/. . && rm -rf {STAGING}; fi\n"
        # Harbor empties the artifact's folder with chmod 777 before uploading into it.
        f"chmod 777 {folder}\n"
        f"chmod +x {TESTS_DIR}/test.sh\n"
    )


def read_rewards(copied: Mapping[str, FileEntry]) -> tuple[dict[str, float], str | None]:
    """The rewards in a copied ``/logs/verifier``, read as Harbor reads them, and the problem
    when there is none: reward.json (flat name -> number) wins over reward.txt (one number)."""
    if "reward.json" in copied:
        try:
            data = json.loads(copied["reward.json"].data)
        except ValueError:
            return {}, "reward.json is not JSON"
        if not isinstance(data, dict) or not all(_finite(v) for v in data.values()):
            return {}, "reward.json is not a flat object of finite numbers"
        if "reward" not in data:
            return {}, f"reward.json has no 'reward' (it has {', '.join(sorted(data)) or 'none'})"
        return {str(k): float(v) for k, v in data.items()}, None
    if "reward.txt" in copied:
        text = copied["reward.txt"].data.decode("utf-8", "replace").strip()
        try:
            value = float(text)
        except ValueError:
            return {}, f"reward.txt is not a number: {text[:40]!r}"
        if not math.isfinite(value):
            return {}, f"reward.txt is not finite: {text[:40]!r}"
        return {"reward": value}, None
    return {}, "tests/test.sh wrote no reward (no reward.txt or reward.json in /logs/verifier)"


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
