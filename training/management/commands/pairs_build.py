"""`manage.py pairs_build SLUG [--per-task N] [--as USERNAME] [--json]`: build the preference
pairs of a behaviour's train tasks for labelling, as the labels page's Build button does.

Prints the new pairs (the most informative first). Exit 0 pairs added; 1 none new, with the
reason (no train task, fewer than two graded rollouts with a trajectory on a task, every pair
built already) or refused by the role; 2 a usage error (an unknown behaviour or user).
"""

from __future__ import annotations

from typing import Any

from training.management.loop_commands import Done, LoopCommand, behaviour_named
from training.models import Behaviour, BehaviourTask, Rollout
from training.services.pairs import pairs_build


class Command(LoopCommand):
    help = "Build the preference pairs of a behaviour's train tasks for labelling."

    def add_step_arguments(self, parser) -> None:
        parser.add_argument("behaviour", metavar="SLUG", help="the behaviour's slug")
        parser.add_argument(
            "--per-task", type=int, metavar="N", help="at most N pairs per task (default: all)"
        )

    def step(self, *, user, behaviour: str, per_task: int | None, **_: Any) -> Done:
        row = behaviour_named(behaviour)
        added = pairs_build(user=user, behaviour_id=row.pk, per_task=per_task)
        payload = {
            "behaviour": row.slug,
            "added": len(added),
            "pairs": [{"pair": p.pk, "task": p.task.candidate_id, "basis": p.basis} for p in added],
            "total": row.pairs.count(),
        }
        text = f"{row.slug}: {len(added)} new pair(s), {payload['total']} in all"
        return Done(payload, text, "" if added else f"no new pairs: {_why_none(row)}")


def _why_none(behaviour: Behaviour) -> str:
    train = behaviour.tasks.filter(split=BehaviourTask.Split.TRAIN)
    if not train.exists():
        return f"{behaviour.slug} has no train task (held-out tasks get no pairs)"
    graded = Rollout.objects.filter(
        candidate_id__in=train.values("candidate_id"), grade=Rollout.Grade.GRADED
    )
    usable = graded.filter(trajectory__isnull=False).count()
    without = graded.filter(trajectory__isnull=True).count()
    lacking = (
        f"; {without} graded rollout(s) have no agent trajectory (a labeller must see what "
        "the agent did)"
        if without
        else ""
    )
    if behaviour.pairs.exists():
        return (
            f"every pair of its {usable} usable graded train rollout(s) is built already{lacking}"
        )
    return (
        f"its train tasks have {usable} graded rollout(s) with a trajectory, and a pair needs "
        f"two of one task that differ in outcome or reward, or both passed{lacking}"
    )
