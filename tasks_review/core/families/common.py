"""What the LLM families share: asking their one question, and dropping with a reason.

outcome = ask_once(llm, question)      # Asked(answer, usage) or Failed(reason, detail, usage)
drop = family_drop("qa", DropReason.QA_INPUT_UNKNOWN, "sales.csv is lost", where)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from groundwork.core.llm import Answer, LlmFailure, Question

from ..mining.drops import Drop, DropReason

STAGE = "mine"


class Asks(Protocol):
    """What a family needs of the LLM seam (``core.llm.LlmClient``)."""

    def ask(self, question: Question) -> Answer: ...


@dataclass(frozen=True, slots=True)
class Where:
    """Where a candidate sits in its trajectory: its first and last steps and commands."""

    start_step: int
    end_step: int
    first_command: int = -1
    last_command: int = -1
    command: str = ""  # the check (or, for qa, the question) a reviewer recognises it by
    language: str = ""


@dataclass(frozen=True, slots=True)
class Asked:
    value: Mapping[str, Any]
    usage: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Failed:
    reason: DropReason
    detail: str
    usage: Mapping[str, Any] = field(default_factory=dict)


def ask_once(llm: Asks, question: Question) -> Asked | Failed:
    """The family's one call for a candidate: the answer and its cost, or why there is none."""
    try:
        answer = llm.ask(question)
    except LlmFailure as failure:
        usage = failure.usage.to_dict() if failure.usage is not None else {}
        return Failed(DropReason(str(failure.kind)), failure.detail, usage)
    return Asked(answer.value, answer.usage.to_dict())


def family_drop(
    family: str,
    reason: DropReason,
    detail: str,
    where: Where,
    llm: Mapping[str, Any] | None = None,
) -> Drop:
    return Drop(
        family=family,
        stage=STAGE,
        reason=reason,
        detail=detail,
        fail_command_index=where.first_command,
        pass_command_index=where.last_command,
        fail_step_index=where.start_step,
        pass_step_index=where.end_step,
        command=where.command,
        language=where.language,
        llm=dict(llm or {}),
    )


def family_key(family: str, identity: Mapping[str, Any]) -> str:
    """A hash of what makes two candidates of ``family`` the same task wherever recorded."""
    encoded = json.dumps({"family": family, **identity}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[: limit - 40] + f"\n[... {len(text) - limit + 40} characters cut ...]"
