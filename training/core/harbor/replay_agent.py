"""A Harbor agent that replays a recorded session's own tool calls inside a kept task.

    harbor run -p TASK_DIR -o JOBS_DIR \\
        -a training.core.harbor.replay_agent:ReplayAgent \\
        --ak script=TASK_DIR.replay.json --ak cut=before_fix \\
        --env training.core.harbor.environment:OfflineDockerEnvironment

``script`` is a replay script (``manage.py replay_script TASK`` writes one beside the task) or a
folder of them; the one written for the task being run is chosen by the instruction Harbor
gives, and a task no script was written for fails its trial saying so. ``cut`` is ``whole``
(the recorded attempt, fix and passing check included: it should score 1) or ``before_fix``
(the same attempt stopped where the session began its fix: a real failing attempt, 0).

Every action goes through the environment (``exec``, ``upload_file``, ``download_file``) as the
task's agent user: shell commands run again where they ran, reads read, writes and deletes
land as the recorded calls left them. What the agent did is written as ATIF to ``/logs/agent``
(``tasks_review.core.recording``, the steps a mined task's solve.sh writes) under Harbor's
session id for the trial, so each trial's import links a trajectory of its own. No model is
called: rollouts with real paths on a machine without one.
"""

from __future__ import annotations

import contextlib
import posixpath
import shlex
import tempfile
import uuid
from pathlib import Path
from typing import Any, ClassVar, cast, override

from harbor.agents.base import BaseAgent
from harbor.agents.options import AgentOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from pydantic import Field

from tasks_review.core.recording import Recorder

from .replay_script import Action, ActionKind, Cut, ReplayScript, ScriptError, choose_script

NAME = "traj2env-replay"
VERSION = "1"
MAX_OUTPUT = 64 << 10  # of a command's output kept in the trajectory (its tail)


class ReplayOptions(AgentOptions):
    script: str = Field(
        description="A replay script (manage.py replay_script writes one), or a folder of them."
    )
    cut: Cut = Field(
        default=Cut.WHOLE,
        description="whole: the recorded attempt with its fix; before_fix: stopped before it.",
    )
    command_timeout_sec: int = Field(
        default=600, ge=1, le=24 * 3600, description="The time limit of each recorded command."
    )


class ReplayAgent(BaseAgent):
    options_model: ClassVar[type[AgentOptions] | None] = ReplayOptions

    @staticmethod
    @override
    def name() -> str:
        return NAME

    @override
    def version(self) -> str:
        return VERSION

    @classmethod
    @override
    def preflight(cls, kwargs: dict[str, Any] | None = None, env: Any = None) -> None:
        """Refuse a missing script before any trial starts (not once per trial)."""
        super().preflight(kwargs, env)
        script = Path(str((kwargs or {}).get("script", ""))).expanduser()
        if not script.exists():
            raise ValueError(f"--ak script={script}: no such replay script or folder")

    @override
    async def setup(self, environment: BaseEnvironment) -> None:
        return

    @override
    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        options = cast(ReplayOptions, self.options)
        try:
            script = choose_script(Path(options.script).expanduser(), instruction)
        except ScriptError as exc:
            raise ValueError(str(exc)) from None
        actions = script.actions_for(options.cut)
        record = Recorder(instruction, call_prefix="replay")
        player = _Player(environment, record, script, options.command_timeout_sec)
        try:
            for action in actions:
                await player.play(action)
        except BaseException:
            # A trial cut short (its time limit, a failing environment) still leaves what it
            # did, if it can; what cut it short is what Harbor records.
            with contextlib.suppress(Exception):
                await self._save(environment, record, script)
            raise
        record.say(_closing(script, options.cut, player))
        await self._save(environment, record, script)
        context.metadata = {
            "replay": {
                "task": script.task,
                "cut": str(options.cut),
                "actions": len(actions),
                "skipped": len(script.skipped),
                "source_sha256": script.source_sha256,
            }
        }

    async def _save(
        self, environment: BaseEnvironment, record: Recorder, script: ReplayScript
    ) -> None:
        """trajectory.json in /logs/agent, whether Harbor mounts that folder or copies it out."""
        where = self.environment_logs_dir / "trajectory.json"
        host = self.logs_dir / "trajectory.json"
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        # Harbor's session id is the trial's: every trial's import gets its own trajectory.
        session = self.session_id or f"replay-{uuid.uuid4().hex}"
        record.save(
            str(host), session_id=session, agent=NAME, version=VERSION, cwd=script.project_dir
        )
        if not environment.is_path_mounted(where, host):
            await environment.upload_file(host, str(where))


class _Player:
    """Re-issues actions in the environment and records each as the call it was."""

    def __init__(
        self, environment: BaseEnvironment, record: Recorder, script: ReplayScript, timeout: int
    ) -> None:
        self.env = environment
        self.record = record
        self.project = script.project_dir
        self.timeout = timeout
        self.last_status: int | None = None
        # Where file contents cross in, root-owned, before `cat` lays them down.
        self.staging = f"/tmp/traj2env-replay-{uuid.uuid4().hex[:12]}"
        self.staged = 0

    async def play(self, action: Action) -> None:
        handlers = {
            ActionKind.BASH: self.bash,
            ActionKind.READ: self.read,
            ActionKind.WRITE: self.write,
            ActionKind.DELETE: self.delete,
            ActionKind.EDIT: self.edit,
        }
        await handlers[action.kind](action)

    async def sh(self, command: str, *, timeout: int | None = None) -> tuple[str, int]:
        """Output (stdout, then stderr) and exit status, as the task's agent user."""
        try:
            done = await self.env.exec(command, cwd=self.project, timeout_sec=timeout)
        except TimeoutError as exc:
            return f"{exc}\n", 124
        except RuntimeError as exc:
            if "timed out" not in str(exc):  # the environment's own failure, not the command's
                raise
            return f"{exc}\n", 124
        return (done.stdout or "") + (done.stderr or ""), done.return_code

    async def bash(self, action: Action) -> None:
        command = action.command
        if action.cwd and action.cwd != self.project:
            # Where the recorded call ran; recorded too, so the trajectory's replay knows it.
            command = f"cd {shlex.quote(action.cwd)} && {command}"
        output, status = await self.sh(command, timeout=self.timeout)
        self.record.bash(command, output[-MAX_OUTPUT:], status)
        self.last_status = status

    async def read(self, action: Action) -> None:
        output, status = await self.sh(f"cat -- {shlex.quote(action.path)}")
        if status == 0:
            self.record.read(action.path, output)
        else:
            self.record.refused("Read", {"file_path": action.path}, output.strip())

    async def delete(self, action: Action) -> None:
        command = f"rm -f -- {shlex.quote(action.path)}"
        output, status = await self.sh(command)
        self.record.bash(command, output, status)

    async def write(self, action: Action) -> None:
        status = await self.put(action.path, action.data)
        try:
            text = action.data.decode("utf-8")
        except UnicodeDecodeError:
            # Not text: the record says a file was written, not what it holds.
            self.record.bash(f"base64 -d > {shlex.quote(action.path)}", "", status)
            return
        if status == 0:
            self.record.write(action.path, text)
        else:
            self.record.refused("Write", {"file_path": action.path, "content": text}, "not written")

    async def edit(self, action: Action) -> None:
        arguments = {"file_path": action.path, "old_string": action.old, "new_string": action.new}
        before = await self.get(action.path)
        if before is None:
            self.record.refused("Edit", arguments, "File does not exist.")
            return
        count = before.count(action.old) if action.old else 0
        if count == 0 or (count > 1 and not action.replace_all):
            why = "String to replace not found in file." if count == 0 else "Found it twice."
            self.record.refused("Edit", arguments, why)
            return
        after = before.replace(action.old, action.new, -1 if action.replace_all else 1)
        if await self.put(action.path, after.encode("utf-8")) != 0:
            self.record.refused("Edit", arguments, "not written")
            return
        self.record.edit(action.path, action.old, action.new, replace_all=action.replace_all)

    async def put(self, path: str, data: bytes) -> int:
        """Write ``data`` to ``path`` as the agent user (a root-owned copy would lock it out):
        the bytes cross in root-owned and readable, then ``cat`` lays them down."""
        self.staged += 1
        staged = f"{self.staging}/{self.staged}"
        with tempfile.TemporaryDirectory(prefix="traj2env-replay-") as folder:
            local = Path(folder) / "content"
            local.write_bytes(data)
            await self.env.upload_file(local, staged)
        parent = posixpath.dirname(path)
        _, status = await self.sh(
            f"mkdir -p -- {shlex.quote(parent)} && cat -- {staged} > {shlex.quote(path)}"
        )
        await self.env.exec(f"rm -rf -- {self.staging}", user="root")
        return status

    async def get(self, path: str) -> str | None:
        with tempfile.TemporaryDirectory(prefix="traj2env-replay-") as folder:
            local = Path(folder) / "content"
            try:
                await self.env.download_file(path, local)
                return local.read_bytes().decode("utf-8")
            except (OSError, RuntimeError, UnicodeDecodeError):
                return None


def _closing(script: ReplayScript, cut: Cut | str, player: _Player) -> str:
    if Cut(cut) is Cut.BEFORE_FIX:
        return (
            f"Stopped where the recorded session began its fix, after {script.fix_at} of its "
            f"{len(script.actions)} calls."
        )
    last = player.last_status
    status = "" if last is None else f"; the last command exited with {last}"
    return f"Replayed the recorded attempt, {len(script.actions)} calls{status}."
