"""Reading a ``harbor run`` jobs folder: every trial in it, as frozen facts for rollouts.

    trials = read_jobs(Path("jobs"))          # one JobTrial per trial folder, in path order
    trial = trials[0]
    trial.task_name, trial.task_digest        # link to a kept task: task_digest(task_dir)
    trial.agent.name, trial.agent.model       # who attempted it
    trial.agent.served_sha256                 # the adapter digest serving says answered it
    trial.reward, trial.file_rewards          # Harbor's reward (result.json) and reward files
    trial.app_dir                             # the collected /app, to re-grade
    trial.status, trial.problems              # complete / failed / partial, and why

A trial folder is one Harbor wrote for a trial (``result.json`` or ``config.json`` naming a
``trial_name``; ``harbor.models.trial.paths.TrialPaths`` lays it out). Job folders around them
and anything else under the root are passed over, and nothing inside a trial folder is searched
again (its collected ``/app`` could hold anything). ``result.json`` is read with Harbor's own
``TrialResult``; a trial that never finished has only ``config.json``, read with
``TrialConfig``, and comes back ``partial`` with the reason. A folder Harbor left half-written
never raises: what could not be read is a problem on the trial.

Which task a trial ran and the reward it got are read by the ingest's own reader
(``trajectories.core.formats.harbor_trial``), so a rollout and the trajectory ingested from
its folder agree on both.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.models.trial.artifact_manifest import ArtifactManifestEntry
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.paths import TrialPaths
from harbor.models.trial.result import TimingInfo, TrialResult
from pydantic import ValidationError

from trajectories.core.formats import HarborTrial, harbor_trial

PROJECT_DIR = "/app"  # what our tasks declare in task.toml's artifacts
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
# Where a trial records the artifact digest of the adapter that answered its agent: the agent's
# context metadata in result.json (Harbor's ``AgentContext.metadata``), written from what the
# serving side reported, never from ``--ak``. The gate counts a rollout for an adapter only when
# this is the registered artifact's digest.
SERVED_KEY = "served_adapter_sha256"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_LOG_SUFFIXES = (".txt", ".log")


class Status:
    COMPLETE = "complete"  # the verifier gave a reward and nothing raised
    FAILED = "failed"  # Harbor recorded an exception
    PARTIAL = "partial"  # no exception, but no result or no reward


@dataclass(frozen=True, slots=True)
class AgentRun:
    name: str | None = None
    version: str | None = None
    model: str | None = None
    provider: str | None = None
    import_path: str | None = None  # a custom agent (`-a module:Class`)
    kwargs: Mapping[str, Any] = field(default_factory=dict)  # `--ak`: prompt version, adapter ...
    served_sha256: str | None = None  # result.json's agent metadata SERVED_KEY, when well formed


@dataclass(frozen=True, slots=True)
class TrialError:
    type: str
    message: str
    step: str | None = None  # multi-step trials record failures per step


@dataclass(frozen=True, slots=True)
class Phase:
    started_at: datetime | None
    finished_at: datetime | None

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


@dataclass(frozen=True, slots=True)
class JobTrial:
    folder: Path
    trial_name: str
    task_name: str | None = None
    task_path: str | None = None  # as Harbor was given it (-p), maybe relative to its cwd
    task_digest: str | None = None  # lock.json: Harbor's content hash, see task_digest()
    task_checksum: str | None = None  # result.json: Harbor's older dirhash of the task
    agent: AgentRun = AgentRun()
    # The verifier's "reward" as the ingest records it: result.json's, else the reward files'.
    reward: float | None = None
    rewards: Mapping[str, float] = field(default_factory=dict)  # result.json verifier_result
    file_rewards: Mapping[str, float] = field(default_factory=dict)  # verifier/reward.{json,txt}
    errors: tuple[TrialError, ...] = ()
    started_at: datetime | None = None
    finished_at: datetime | None = None
    phases: Mapping[str, Phase] = field(default_factory=dict)
    trajectories: tuple[Path, ...] = ()  # ATIF trajectory*.json, the trial's own first
    sessions: tuple[Path, ...] = ()  # the agent's native session logs (*.jsonl)
    agent_logs: tuple[Path, ...] = ()  # e.g. oracle.txt (solve.sh's output), claude-code.txt
    app_dir: Path | None = None  # the collected project folder
    problems: tuple[str, ...] = ()
    ingest: HarborTrial | None = None  # the ingest's view of the folder, when it sees a trial

    @property
    def status(self) -> str:
        if self.errors:
            return Status.FAILED
        if self.finished_at is None or self.reward is None:
            return Status.PARTIAL
        return Status.COMPLETE

    @property
    def rewards_agree(self) -> bool | None:
        """Whether result.json and the reward files give the same reward (None: one is missing)."""
        recorded, written = self.rewards.get("reward"), self.file_rewards.get("reward")
        if recorded is None or written is None:
            return None
        return math.isclose(recorded, written, abs_tol=1e-9)


def task_digest(task_dir: Path) -> str:
    """Harbor's content digest of a task folder, as its lock.json records it (``sha256:...``)."""
    from harbor.publisher.packager import Packager

    content_hash, _ = Packager.compute_content_hash(Path(task_dir))
    return f"sha256:{content_hash}"


def read_jobs(root: Path, *, project_dir: str = PROJECT_DIR) -> list[JobTrial]:
    """Every trial folder under ``root`` (a jobs folder, a job folder or one trial)."""
    root = Path(root)
    found: list[JobTrial] = []
    for dirpath, dirnames, _ in os.walk(root, onerror=lambda _: None):
        folder = Path(dirpath)
        if _trial_name(folder, root) is not None:
            found.append(read_trial(folder, project_dir=project_dir, root=root))
            dirnames.clear()
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
    return sorted(found, key=lambda trial: trial.folder)


def read_trial(
    folder: Path, *, project_dir: str = PROJECT_DIR, root: Path | None = None
) -> JobTrial:
    """One trial folder; what cannot be read is recorded in ``problems``.

    Nothing is read from outside ``root`` (the jobs folder given; the trial folder itself by
    default): a symlink that leaves it is refused. Nothing but regular files is opened: a
    FIFO or a device would block the reader or stream for ever, so it is skipped. Either way
    the reason is a problem on the trial.
    """
    paths = TrialPaths(Path(folder).absolute())
    jail = Path(root if root is not None else folder).absolute()
    refused = _refusals(paths.trial_dir, jail)
    problems: list[str] = list(refused)
    result = _model(paths.result_path, TrialResult, problems, jail)
    config = result.config if result else _model(paths.config_path, TrialConfig, problems, jail)
    if result is None and not paths.result_path.exists():
        problems.insert(0, "no result.json: the trial did not finish")
    ingest = harbor_trial(paths.result_path) if _readable(paths.result_path, jail) else None
    if ingest is not None and ingest.root != paths.trial_dir:
        ingest = None  # a folder further up, not this trial
    file_rewards = _file_rewards(paths, _step_names(result), problems, jail)
    rewards = _rewards(result)
    # The ingest's reader opens the reward files itself: with any entry refused, only what
    # was read here counts.
    trusted = ingest if ingest and not refused else None
    reward = trusted.reward if trusted else rewards.get("reward", file_rewards.get("reward"))
    if reward is None and result is not None and not result.recorded_exceptions():
        problems.append("the verifier gave no reward")
    app_dir = _collected(paths, project_dir, jail)
    if app_dir is None:
        problems.append(f"no collected {project_dir}: Harbor collected no such artifact")
    trajectories, sessions, logs = _agent_files(paths, jail)
    return JobTrial(
        folder=paths.trial_dir,
        trial_name=(result.trial_name if result else None)
        or (config.trial_name if config else None)
        or paths.trial_dir.name,
        task_name=(ingest.task if ingest else None)
        or (result.task_name if result else None)
        or (_task_path_name(config) if config else None),
        task_path=str(config.task.path) if config and config.task.path else None,
        task_digest=_lock_digest(paths, jail),
        task_checksum=result.task_checksum if result else None,
        agent=_agent(result, config),
        reward=reward,
        rewards=rewards,
        file_rewards=file_rewards,
        errors=_errors(result),
        started_at=result.started_at if result else None,
        finished_at=result.finished_at if result else None,
        phases={name: _phase(getattr(result, name)) for name in PHASES if result},
        trajectories=trajectories,
        sessions=sessions,
        agent_logs=logs,
        app_dir=app_dir,
        problems=tuple(problems),
        ingest=ingest,
    )


def _refusals(trial_dir: Path, jail: Path) -> list[str]:
    """Why entries of a trial folder are not read: symlinks leaving the jobs folder, FIFOs,
    sockets and devices. The collected project's own contents are the grader's to judge."""
    found: list[str] = []
    collected = trial_dir / "artifacts"
    for dirpath, dirnames, filenames in os.walk(trial_dir):
        here = Path(dirpath)
        for name in [*dirnames, *filenames]:
            path = here / name
            reason = _refusal(path, jail)
            if reason is not None:
                found.append(f"{path.relative_to(trial_dir)} {reason}")
        if here == collected:
            dirnames.clear()  # artifacts/app itself was screened; what is inside it is /app's
    return found


def _refusal(path: Path, jail: Path) -> str | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode) and not _inside(path, jail):
        return "is a symlink that leaves the jobs folder: refused"
    try:
        info = os.stat(path)
    except OSError:
        return None  # a dangling link: nothing to read, nothing refused
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        return None
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(info.st_mode)
        else "a socket"
        if stat.S_ISSOCK(info.st_mode)
        else "a device"
    )
    return f"is {kind}, not a file: skipped"


def _inside(path: Path, jail: Path) -> bool:
    try:
        return path.resolve().is_relative_to(jail.resolve())
    except (OSError, RuntimeError):
        return False


def _readable(path: Path, jail: Path) -> bool:
    """A regular file inside the jobs folder: the only kind opened here (``os.stat``, which
    never opens, decides; opening a FIFO would block)."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and _inside(path, jail)


def _directory(path: Path, jail: Path) -> bool:
    return path.is_dir() and _inside(path, jail)


def _trial_name(folder: Path, jail: Path) -> str | None:
    for name in ("result.json", "config.json"):
        data = _json(folder / name, jail)
        if isinstance(data, dict) and isinstance(data.get("trial_name"), str):
            return data["trial_name"]
    result = folder / "result.json"
    linked = harbor_trial(result) if _readable(result, jail) else None
    if linked is not None and linked.root == folder.absolute():
        return linked.trial  # a fork's result.json without trial_name, beside trial outputs
    return None


def _model[M: (TrialResult, TrialConfig)](
    path: Path, model: type[M], problems: list[str], jail: Path
) -> M | None:
    if not _readable(path, jail):
        return None
    try:
        with warnings.catch_warnings():
            # Older Harbors' fields (mounts_json ...) are expected here, not news.
            warnings.simplefilter("ignore", DeprecationWarning)
            return model.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError) as exc:
        first = str(exc).splitlines()
        problems.append(f"{path.name} unreadable: {' '.join(first[:3])[:300]}")
        return None


def _rewards(result: TrialResult | None) -> dict[str, float]:
    rewards = (result.verifier_result.rewards if result and result.verifier_result else None) or {}
    return {key: float(value) for key, value in rewards.items()}


def _step_names(result: TrialResult | None) -> list[str]:
    return [step.step_name for step in (result.step_results or [])] if result else []


def _file_rewards(
    paths: TrialPaths, steps: list[str], problems: list[str], jail: Path
) -> dict[str, float]:
    """reward.json (flat key -> number) or reward.txt (one number), as Harbor's verifier reads
    them; a multi-step trial's come from its last step (in result.json's order) that has them."""
    folders = [paths.verifier_dir]
    if _directory(paths.steps_dir, jail):
        on_disk = sorted(p.name for p in paths.steps_dir.iterdir())
        ordered = [n for n in steps if n in on_disk] + [n for n in on_disk if n not in steps]
        folders += [paths.step_verifier_dir(name) for name in reversed(ordered)]
    for folder in folders:
        data = _json(folder / "reward.json", jail)
        if isinstance(data, dict):
            numbers = {k: float(v) for k, v in data.items() if _finite(v)}
            if len(numbers) != len(data):
                problems.append(f"{folder.name}/reward.json has values that are not numbers")
            return numbers
        if not _readable(folder / "reward.txt", jail):
            continue
        try:
            text = (folder / "reward.txt").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return {"reward": value}
        problems.append(f"{folder.name}/reward.txt is not a number: {text[:40]!r}")
        return {}
    return {}


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _agent(result: TrialResult | None, config: TrialConfig | None) -> AgentRun:
    info = result.agent_info if result else None
    model = info.model_info if info else None
    configured = config.agent if config else None
    return AgentRun(
        name=(info.name if info else None) or (configured.name if configured else None),
        version=info.version if info else None,
        model=(model.name if model else None) or (configured.model_name if configured else None),
        provider=model.provider if model else None,
        import_path=configured.import_path if configured else None,
        kwargs=dict(configured.kwargs) if configured else {},
        served_sha256=_served(result),
    )


def _served(result: TrialResult | None) -> str | None:
    """The adapter digest the serving side reported for the trial (a multi-step trial's steps
    must agree), or None: none recorded, not a sha256, or steps that disagree."""
    if result is None:
        return None
    contexts = [result.agent_result] if result.agent_result is not None else []
    contexts += [s.agent_result for s in result.step_results or [] if s.agent_result is not None]
    found = {str((c.metadata or {}).get(SERVED_KEY) or "").lower() for c in contexts} - {""}
    if len(found) != 1:
        return None
    (digest,) = found
    return digest if _SHA256.match(digest) else None


def _errors(result: TrialResult | None) -> tuple[TrialError, ...]:
    if result is None:
        return ()
    errors = []
    if result.exception_info is not None:
        info = result.exception_info
        errors.append(TrialError(info.exception_type, info.exception_message))
    for step in result.step_results or []:
        if step.exception_info is not None:
            info = step.exception_info
            errors.append(TrialError(info.exception_type, info.exception_message, step.step_name))
    return tuple(errors)


def _phase(timing: TimingInfo | None) -> Phase:
    return Phase(timing.started_at, timing.finished_at) if timing else Phase(None, None)


def _task_path_name(config: TrialConfig) -> str | None:
    path = config.task.path
    return PurePosixPath(str(path)).name if path else None


def _lock_digest(paths: TrialPaths, jail: Path) -> str | None:
    lock = _json(paths.lock_path, jail)
    task = lock.get("task") if isinstance(lock, dict) else None
    digest = task.get("digest") if isinstance(task, dict) else None
    return digest if isinstance(digest, str) else None


def _collected(paths: TrialPaths, project_dir: str, jail: Path) -> Path | None:
    """Where Harbor's artifact collection put ``project_dir``, by its manifest when it has one;
    never a folder outside the trial's (a symlinked ``artifacts/app`` is not the world)."""
    entries = _json(paths.artifacts_manifest_path, jail)
    for raw in entries if isinstance(entries, list) else []:
        try:
            entry = ArtifactManifestEntry.model_validate(raw)
        except ValidationError:
            continue
        if entry.source.rstrip("/") == project_dir and entry.status == "ok":
            where = (paths.trial_dir / entry.destination).resolve()
            if where.is_dir() and where.is_relative_to(paths.trial_dir.resolve()):
                return where
    fallback = paths.host_artifact_path("main", project_dir)
    inside = _inside(fallback, paths.trial_dir) and _inside(fallback, jail)
    return fallback if fallback.is_dir() and inside else None


def _agent_files(
    paths: TrialPaths, jail: Path
) -> tuple[tuple[Path, ...], tuple[Path, ...], tuple[Path, ...]]:
    folders = [paths.agent_dir]
    if _directory(paths.steps_dir, jail):
        folders += sorted(p / "agent" for p in paths.steps_dir.iterdir())
    trajectories: list[Path] = []
    sessions: list[Path] = []
    logs: list[Path] = []
    for folder in folders:
        if not _directory(folder, jail):
            continue
        main = folder / "trajectory.json"
        if _readable(main, jail):
            trajectories.append(main)
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not _readable(path, jail) or path == main:
                continue
            if path.name.startswith("trajectory") and path.suffix == ".json":
                trajectories.append(path)
            elif path.suffix == ".jsonl":
                sessions.append(path)
            elif path.suffix in _LOG_SUFFIXES:
                logs.append(path)
    return tuple(trajectories), tuple(sessions), tuple(logs)


def _json(path: Path, jail: Path) -> Any:
    if not _readable(path, jail):
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
