"""A qa task's ``tests/``: the answer file's grader instead of a check's.

    files = answer_grader_files(candidate, 600, kit)   # {"tests/test.sh": (bytes, mode), ...}

``tests/grading.json`` holds the expected answer (type, value, tolerance) and the answer file's
name; ``tests/grader/`` the kit, whose ``answer_grade.py`` reads that one file of the submission
and judges it by ``answers.py``. Like every ``tests/`` folder it reaches only the separate
verifier, never the agent's image.
"""

from __future__ import annotations

import json
from typing import Any

from .mining.candidate import RepairCandidate
from .trials.answers import GRADING
from .trials.version import VERIFIER_VERSION

GRADER_DIR = "tests/grader"


def answer_grading_config(candidate: RepairCandidate, check_timeout: int) -> dict[str, Any]:
    facts = candidate.family_facts
    return {
        "schema": 2,
        "grading": GRADING,
        "verifier_version": VERIFIER_VERSION,
        "project": candidate.project_dir,
        "workdir": candidate.project_dir,
        "command": candidate.task_command,
        "timeout": int(check_timeout),
        "answer_file": facts["answer_file"],
        "expected": dict(facts["expected"]),
    }


def answer_grader_files(
    candidate: RepairCandidate, check_timeout: int, kit_files: dict[str, bytes]
) -> dict[str, tuple[bytes, int]]:
    """``kit_files``: the grader kit by name (taskfiles ships the same kit to every task; the
    answer grader reuses its reward writer)."""
    config = answer_grading_config(candidate, check_timeout)
    files = {f"{GRADER_DIR}/{name}": (data, 0o644) for name, data in kit_files.items()}
    files["tests/grading.json"] = (
        (json.dumps(config, indent=1, sort_keys=True, ensure_ascii=True) + "\n").encode(),
        0o644,
    )
    files["tests/test.sh"] = (_test_sh(candidate).encode(), 0o755)
    return files


def _test_sh(candidate: RepairCandidate) -> str:
    answer = candidate.family_facts["answer_file"]
    return f"""#!/bin/bash
# The grader of a qa task (traj2env). Harbor runs it as root in the separate verifier after the
# agent's {candidate.project_dir} has been copied in. grader/answer_grade.py (standard library
# only) reads {candidate.project_dir}/{answer} and nothing else of the submission (never
# following a link), and judges it against the expected answer in grading.json: reward 1 only
# for one answer that matches (a number within the tolerance, the exact value, the exact set).
{launch_grader("answer_grade.py")}"""


def launch_grader(script: str) -> str:
    """The end of every task's ``test.sh``: ``grader/SCRIPT`` run by the image's Python.

    Root runs this, and in same-container grading the agent's processes ran just before it:
    every program is named by its absolute path and started in a clean environment (nothing
    is looked up on a PATH the agent may have written to, no ``PYTHON*`` or ``LD_*`` variable
    crosses); the PATH the check should see goes as data, for the grader to filter. No file
    is written through a link the agent planted in the verifier's folder.
    """
    return f"""set -u
case "${{BASH_SOURCE[0]}}" in */*) TESTS="${{BASH_SOURCE[0]%/*}}" ;; *) TESTS=. ;; esac
TESTS="$(cd -- "$TESTS" && pwd -P)"
VERIFIER_DIR="${{TRAJ2ENV_VERIFIER_DIR:-/logs/verifier}}"
/bin/mkdir -p -- "$VERIFIER_DIR"
/bin/rm -rf -- "$VERIFIER_DIR/reward.txt" "$VERIFIER_DIR/reward.json"
(set -C; printf '0\\n' > "$VERIFIER_DIR/reward.txt")
for python in /usr/bin/python3 /usr/local/bin/python3; do
  if [ -x "$python" ]; then
    exec /usr/bin/env -i LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \\
      TRAJ2ENV_CHECK_PATH="${{PATH:-}}" TRAJ2ENV_VERIFIER_DIR="$VERIFIER_DIR" \\
      "$python" -I "$TESTS/grader/{script}" "$TESTS/grading.json"
  fi
done
echo "grader: the image has no python3; reward 0"
exit 0
"""
