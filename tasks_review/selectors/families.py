"""What a build, extend or qa candidate needs a reviewer to see beyond a repair's evidence: its
hidden tests (and, once verified, the test ids scored and those that must keep passing), or its
question and expected answer; and a run's LLM use per family."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from ..core.families import needs_llm
from ..models import Candidate, PipelineRun

MAX_IDS = 50


@dataclass(frozen=True)
class FamilyFacts:
    family: str
    hidden_tests: list[str] = field(default_factory=list)
    interface: list[str] = field(default_factory=list)
    scored: list[str] = field(default_factory=list)  # test ids the reward is the share of
    kept: list[str] = field(default_factory=list)  # test ids that must keep passing
    request: str = ""
    question: str = ""
    expected: dict[str, Any] = field(default_factory=dict)
    answer: str = ""  # the expected answer as the oracle writes it
    inputs: list[str] = field(default_factory=list)
    reported: str = ""

    @property
    def is_qa(self) -> bool:
        return self.family == "qa"


def family_facts(candidate: Candidate) -> FamilyFacts | None:
    """None for repair (and authored tasks): the desk's usual evidence says it all."""
    facts = (candidate.payload or {}).get("family_facts") or {}
    if not facts:
        return None
    expected = dict(facts.get("expected") or {})
    value = expected.get("value")
    answer = "\n".join(value) if isinstance(value, list) else str(value or "")
    scored, kept = _verified_tests(candidate.task_dir)
    return FamilyFacts(
        family=candidate.family,
        hidden_tests=list(facts.get("hidden_tests") or []),
        interface=list(facts.get("interface") or []),
        scored=scored[:MAX_IDS],
        kept=kept[:MAX_IDS],
        request=str(facts.get("request") or ""),
        question=str(facts.get("question") or ""),
        expected=expected,
        answer=answer,
        inputs=list(facts.get("inputs") or []),
        reported=str(facts.get("reported") or ""),
    )


def _verified_tests(task_dir: str) -> tuple[list[str], list[str]]:
    """(scored, kept) test ids from the task's grading.json, once the matrix recorded them."""
    if not task_dir:
        return [], []
    try:
        config = json.loads((Path(task_dir) / "tests" / "grading.json").read_text())
    except (OSError, ValueError):
        return [], []
    passed = config.get("reference_passed") or {}
    scored = sorted(config.get("start_failed") or [])
    return scored, sorted(set(passed) - set(scored))


def llm_use(run: PipelineRun) -> list[tuple[str, dict[str, Any]]]:
    """(family, its yield with the LLM's calls and cost) for the families that asked a model."""
    by_family = (run.report or {}).get("yield") or {}
    return [(name, row) for name, row in sorted(by_family.items()) if row.get("llm")]


def skipped_families(run: PipelineRun) -> dict[str, str]:
    """The run's families that do not run, and why (no LLM model for build, extend, qa)."""
    if settings.TRAJ2ENV["LLM_MODEL"]:
        return {}
    why = "no LLM model configured (set TRAJ2ENV_LLM_MODEL)"
    return dict.fromkeys(needs_llm(run.families), why)
