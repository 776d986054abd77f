"""Validation with Harbor's ATIF model, and the summary row every loaded file gets."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from harbor.models.trajectories import Trajectory
from pydantic import ValidationError

from .model import HarborTrial, IngestError, LineWarning, TrajectoryMeta

SCHEMA_VERSIONS: tuple[str, ...] = get_args(Trajectory.model_fields["schema_version"].annotation)
TITLE_LENGTH = 200

# Text the harness, not the person, put in a user turn: slash-command echoes,
# reminders, the instructions and environment Codex injects as user messages.
_WRAPPERS = (
    "<command-",
    "<local-command",
    "<system-reminder",
    "<environment_context",
    "<user_instructions",
    "<permissions instructions",
    "<task-notification",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "Caveat: The messages below",
    "[Request interrupted",
)
_SPACE = re.compile(r"\s+")
_SLASH_COMMAND = re.compile(r"^/[\w:.-]+$")  # "/mode", "/clear": driving the tool, not a request


@dataclass(frozen=True)
class Hints:
    """What a format knows about its file beyond the ATIF document."""

    session_id: str | None = None
    cwd: str | None = None
    started_at: str | None = None
    titles: tuple[str, ...] = ()  # preferred title candidates, tried before user steps
    parent_session_id: str | None = None
    is_subagent: bool = False
    warnings: tuple[LineWarning, ...] = ()  # repairs the converter made around lost lines


def recorded_git(commit: Any = None, branch: Any = None, remote: Any = None) -> dict[str, str]:
    """``side_data["git"]``: the repository state a harness recorded at the session's start
    (Codex's ``session_meta.git``, Claude Code's ``gitBranch``), which ATIF has no place for.
    A clone of the project finds the session's starting commit from it."""
    fields = {"commit": commit, "branch": branch, "remote": remote}
    return {k: v.strip() for k, v in fields.items() if isinstance(v, str) and v.strip()}


def validate(document: dict[str, Any], path: Path, origin: str) -> Trajectory:
    """Harbor's model is the arbiter of valid ATIF; its complaints become an IngestError."""
    version = document.get("schema_version")
    if version is not None and version not in SCHEMA_VERSIONS:
        raise IngestError(
            path,
            f"unsupported ATIF schema version {repr(version)[:60]} "
            f"(Harbor reads {SCHEMA_VERSIONS[0]} to {SCHEMA_VERSIONS[-1]})",
        )
    if isinstance(document.get("steps"), list) and not document["steps"]:
        raise IngestError(path, f"{origin} has no steps")
    try:
        return Trajectory.model_validate(document)
    except ValidationError as error:
        raise IngestError(path, f"{origin} is not valid ATIF: {_summarise(error)}") from None
    except RecursionError:
        raise IngestError(path, f"{origin} is nested too deeply to validate") from None


def _summarise(error: ValidationError) -> str:
    problems = error.errors(include_url=False, include_input=False)
    shown = []
    for problem in problems[:3]:
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in problem["loc"]
        ).lstrip(".")
        shown.append(f"{where or 'document'}: {problem['msg']}")
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return "; ".join(shown) + more


def build_meta(model: Trajectory, hints: Hints, trial: HarborTrial | None) -> TrajectoryMeta:
    agent = model.agent
    totals = model.final_metrics
    prompt = totals.total_prompt_tokens if totals else None
    completion = totals.total_completion_tokens if totals else None
    cost = totals.total_cost_usd if totals else None
    if prompt is None and completion is None and cost is None:
        prompt, completion, cost = _sum_steps(model)
    return TrajectoryMeta(
        session_id=hints.session_id or model.session_id,
        agent_name=agent.name,
        agent_version=agent.version,
        model_name=agent.model_name or _first_model(model),
        cwd=hints.cwd or _cwd(agent.extra),
        started_at=hints.started_at or _started_at(model),
        steps=len(model.steps),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=cost,
        title=title(hints.titles, _user_texts(model)),
        parent_session_id=hints.parent_session_id or _parent(agent.extra, model.extra),
        is_subagent=hints.is_subagent or bool(_parent(agent.extra, model.extra)),
        harbor_task=trial.task if trial else None,
        harbor_reward=trial.reward if trial else None,
    )


def _first_model(model: Trajectory) -> str | None:
    return next((step.model_name for step in model.steps if step.model_name), None)


def _sum_steps(model: Trajectory) -> tuple[int | None, int | None, float | None]:
    metrics = [step.metrics for step in model.steps if step.metrics]
    if not metrics:
        return None, None, None
    prompt = [m.prompt_tokens for m in metrics if m.prompt_tokens is not None]
    completion = [m.completion_tokens for m in metrics if m.completion_tokens is not None]
    cost = [m.cost_usd for m in metrics if m.cost_usd is not None]
    return (
        sum(prompt) if prompt else None,
        sum(completion) if completion else None,
        sum(cost) if cost else None,
    )


def _cwd(extra: dict[str, Any] | None) -> str | None:
    if not extra:
        return None
    if isinstance(extra.get("cwd"), str):
        return extra["cwd"]
    cwds = extra.get("cwds")
    if isinstance(cwds, list) and cwds and isinstance(cwds[0], str):
        return cwds[0]
    return None


def _parent(*extras: dict[str, Any] | None) -> str | None:
    for extra in extras:
        if extra and isinstance(extra.get("parent_session_id"), str):
            return extra["parent_session_id"]
    return None


def _started_at(model: Trajectory) -> str | None:
    extra = model.extra or {}
    if isinstance(extra.get("started_at"), str):
        return extra["started_at"]
    return next((step.timestamp for step in model.steps if step.timestamp), None)


def _user_texts(model: Trajectory) -> Iterable[str]:
    for step in model.steps:
        if step.source != "user" or step.is_copied_context or (step.extra or {}).get("meta"):
            continue
        if isinstance(step.message, str):
            yield step.message
        else:
            yield " ".join(part.text or "" for part in step.message if part.type == "text")


def title(preferred: Sequence[str], texts: Iterable[str]) -> str:
    """The first request a person typed: one line, at most TITLE_LENGTH characters."""
    for text in (*preferred, *texts):
        line = _SPACE.sub(" ", text).strip()
        if not line or line.startswith(_WRAPPERS) or _SLASH_COMMAND.match(line):
            continue
        if len(line) > TITLE_LENGTH:
            line = line[: TITLE_LENGTH - 1].rstrip() + "…"
        return line
    return ""
