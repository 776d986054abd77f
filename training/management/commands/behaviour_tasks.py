"""`manage.py behaviour_tasks add|remove SLUG [TASK...] [--family F] [--as USERNAME] [--json]`:
choose a behaviour's tasks from the terminal, through the services its page calls.

``add`` takes kept tasks, each given its split now, once, by a stable hash; ``remove`` takes out
a task chosen by mistake (an audit row names each and its split; a task with eval results or
preference pairs stays, since removing it would erase them). A TASK is a candidate id or a
task's name (its Harbor folder); ``add --family`` takes every kept task of that family
(``repair``, ``build``, ``extend``, ``qa``, ``authored``).

Exit 0 done; 1 refused (the role, a task with results) or nothing new to add; 2 a usage error
(an unknown behaviour, task or user, a task not kept or not the behaviour's).
"""

from __future__ import annotations

from typing import Any

from tasks_review.models import Candidate
from training.management.loop_commands import (
    Done,
    LoopCommand,
    behaviour_named,
    candidate_ids,
    counted,
    counts,
    described,
    usage_error,
)
from training.models import Behaviour
from training.services.behaviours import behaviour_tasks_add, behaviour_tasks_remove


class Command(LoopCommand):
    help = "Add kept tasks to a behaviour (split once, by a stable hash), or remove tasks."

    def add_step_arguments(self, parser) -> None:
        parser.add_argument("action", choices=("add", "remove"))
        parser.add_argument("behaviour", metavar="SLUG", help="the behaviour's slug")
        parser.add_argument("tasks", nargs="*", metavar="TASK", help="a candidate id or task name")
        parser.add_argument("--family", help="add: every kept task of this family, e.g. repair")

    def step(
        self, *, user, action: str, behaviour: str, tasks: list[str], family: str | None, **_: Any
    ) -> Done:
        row = behaviour_named(behaviour)
        if action == "remove":
            if family:
                raise usage_error("--family adds tasks; name the tasks to remove")
            return _remove(user, row, tasks)
        if not tasks and not family:
            raise usage_error("name the tasks to add (candidate ids or task names) or --family")
        ids = candidate_ids(tasks, kept=True)
        if family:
            kept = Candidate.objects.filter(family=family, status=Candidate.Status.KEPT)
            ids += list(kept.values_list("pk", flat=True))
        added = behaviour_tasks_add(user=user, behaviour_id=row.pk, candidate_ids=ids)
        payload = {"behaviour": row.slug, "added": described(added), "tasks": counts(row)}
        text = f"{row.slug}: added {len(added)} task(s); {counted(payload['tasks'])}"
        nothing = "" if added else f"nothing new to add: {_why_nothing(row, ids, family)}"
        return Done(payload, text, nothing)


def _remove(user: Any, behaviour: Behaviour, tasks: list[str]) -> Done:
    if not tasks:
        raise usage_error("name the tasks to remove (candidate ids or task names)")
    ids = candidate_ids(tasks, kept=False)
    removed = behaviour_tasks_remove(user=user, behaviour_id=behaviour.pk, candidate_ids=ids)
    payload = {
        "behaviour": behaviour.slug,
        "removed": described(removed),
        "tasks": counts(behaviour),
    }
    text = f"{behaviour.slug}: removed {len(removed)} task(s); {counted(payload['tasks'])}"
    return Done(payload, text)


def _why_nothing(behaviour: Behaviour, ids: list[int], family: str | None) -> str:
    if not ids:
        return f"no kept task of the family {family!r}"
    one = len(set(ids)) == 1
    return f"{'it is already a task' if one else 'they are already tasks'} of {behaviour.slug}"
