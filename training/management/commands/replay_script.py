"""`manage.py replay_script TASK [--out PATH] [--as USERNAME] [--json]`: write the replay script of
a kept task (by id or name), for rollouts without a model: the recorded session's own calls,
whole or cut before the fix, replayed in the task by Harbor.

The script goes beside the task folder (`TASK_DIR.replay.json`) unless `--out` says where;
the harbor commands that run it are printed. Exit 0 written; 1 refused by the role; 2 a usage
error (an unknown task, an authored task, a task whose session cannot be replayed).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from tasks_review.models import Candidate
from training.management.loop_commands import Done, LoopCommand, candidate_ids
from training.services.replay_scripts import replay_script_write

AGENT = "training.core.harbor.replay_agent:ReplayAgent"
ENVIRONMENT = "training.core.harbor.environment:OfflineDockerEnvironment"


class Command(LoopCommand):
    help = "Write a kept task's replay script: its recorded session's calls, for harbor run."

    def add_step_arguments(self, parser) -> None:
        parser.add_argument("task", metavar="TASK", help="a kept task's id or name")
        parser.add_argument(
            "--out", metavar="PATH", help="where to write it (default: beside the task folder)"
        )

    def step(self, *, user, task: str, out: str | None, **_: Any) -> Done:
        (candidate_id,) = candidate_ids([task], kept=True)
        path, script = replay_script_write(
            user=user, candidate_id=candidate_id, out=Path(out).expanduser() if out else None
        )
        task_dir = Path(Candidate.objects.get(pk=candidate_id).task_dir)
        commands = {cut: harbor_command(task_dir, path, cut) for cut in ("whole", "before_fix")}
        payload = {
            "task": script.task,
            "path": str(path),
            "actions": len(script.actions),
            "fix_at": script.fix_at,
            "skipped": len(script.skipped),
            "harbor": commands,
        }
        text = (
            f"{script.task}: {len(script.actions)} recorded calls to replay, the fix from call "
            f"{script.fix_at + 1}; written to {path}\n"
            f"  whole session:   {commands['whole']}\n"
            f"  cut before fix:  {commands['before_fix']}"
        )
        return Done(payload, text)


def harbor_command(task: Path, script: Path, cut: str) -> str:
    """The harbor run that replays ``script`` on its task, offline, into ./jobs."""
    return shlex.join(
        [
            "harbor",
            "run",
            "-p",
            str(task),
            "-a",
            AGENT,
            "--ak",
            f"script={script}",
            "--ak",
            f"cut={cut}",
            "--env",
            ENVIRONMENT,
            "-o",
            "jobs",
        ]
    )
