"""Judging a qa task's answer in the parent process, by the kit's own rules (``kit/answers.py``).

The host does not take the verifier's word for it: it judges the answer file among the very
bytes that crossed from the agent's container (``Submission.files``), with the same module the
task's grader (``kit/answer_grade.py``) uses, and the verifier keeps the verdict only when the
two agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groundwork.core.docker import FileEntry

from .kit import answers
from .kit.judging import Judgement

GRADING = "answer"


def is_answer_task(config: Mapping[str, Any]) -> bool:
    """Whether a task's grading.json grades an answer file (a qa task) rather than a check."""
    return config.get("grading") == GRADING


def judge_answer(files: Mapping[str, FileEntry], config: Mapping[str, Any]) -> Judgement:
    entry = files.get(str(config["answer_file"]))
    judged = answers.judge(entry.data if entry is not None else None, config["expected"])
    return Judgement(
        reward=judged.reward,
        reasons=judged.reasons,
        grading=GRADING,
        detail={"answer": judged.answer, "answer_file": config["answer_file"]},
    )
