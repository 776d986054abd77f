"""The values the format layer hands back, and the one error it raises for a bad file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMATS = ("atif", "claude-code", "codex", "pi")


@dataclass(frozen=True)
class TrajectoryMeta:
    session_id: str | None
    agent_name: str | None
    agent_version: str | None
    model_name: str | None
    cwd: str | None
    started_at: str | None
    steps: int
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    title: str
    parent_session_id: str | None
    is_subagent: bool
    harbor_task: str | None
    harbor_reward: float | None


@dataclass(frozen=True, slots=True)
class LineWarning:
    """A line of the file that was skipped or repaired; the rest of the file was kept."""

    line: int
    reason: str


@dataclass(frozen=True)
class Loaded:
    format: str
    atif: dict[str, Any]
    side_data: dict[str, Any]
    meta: TrajectoryMeta
    warnings: tuple[LineWarning, ...] = ()

    @property
    def partial(self) -> bool:
        """Whether some line of the source did not make it into the ATIF as written."""
        return bool(self.warnings)


@dataclass(frozen=True)
class NotTrajectory:
    reason: str


@dataclass(frozen=True)
class Unreadable:
    """A path given to ingest that is not a regular file it may open (a FIFO, a device ...)."""

    path: Path
    reason: str


@dataclass(frozen=True)
class HarborTrial:
    root: Path
    task: str | None
    trial: str | None
    reward: float | None
    # result.json's config: the task's folder and the trials' folder, both relative to where
    # harbor ran (datasets/x/<task>, jobs/<job>), which locate the task beside the jobs folder.
    task_path: str | None = None
    trials_dir: str | None = None


class IngestError(Exception):
    """A file that should be a trajectory but cannot be read as one."""

    def __init__(self, path: Path, reason: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.reason = reason
        self.line = line
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {reason}")

    # Workers pickle exceptions across processes; the default reduce would call
    # __init__ with the formatted message alone and fail.
    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.reason, self.line))
