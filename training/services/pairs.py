"""Preference pairs built from the rollouts of each of a behaviour's train tasks.

``training.core.pairs.candidate_pairs`` chooses and orders them: outcomes that differ first,
then rewards that differ, then pairs that both passed (labelled on path quality); two equal
failures, unverified rollouts and the same trajectory twice are left out. Pairs are created in
that order, so the labelling queue (by id) serves the most informative first.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from groundwork.access.errors import NotFound, require
from groundwork.services.audit import audit_event_record
from training.core.pairs import Rollout as CoreRollout
from training.core.pairs import candidate_pairs

from ..models import Behaviour, BehaviourTask, PreferencePair, Rollout
from ..roles import EXPORT
from ..selectors.provenance import Admission, RolloutState, Use

# A verified reward at least this high is the task passed.
PASSED = 1.0 - 1e-9


def _core(rollout: Rollout, task: BehaviourTask) -> CoreRollout:
    return CoreRollout(
        trajectory_id=str(rollout.pk),
        task_id=str(task.pk),
        reward=rollout.reward,
        passed=rollout.reward is not None and rollout.reward >= PASSED,
        agent=rollout.agent,
        model=rollout.model,
        adapter=rollout.adapter,
        seed=rollout.trial_name,
        source_sha256=rollout.trajectory.source.sha256 if rollout.trajectory else "",
    )


def pairs_build(
    *, user: AbstractBaseUser | None, behaviour_id: int, per_task: int | None = None
) -> list[PreferencePair]:
    """Add the pairs of the behaviour's train tasks that do not exist yet; the new ones, in
    order. Only graded rollouts with a trajectory count (a labeller must see what they did), of
    tasks the provenance rule lets train (accepted on the desk, kept by the current verifier,
    held out for no behaviour), since a pair's rollouts are training data."""
    if user is not None:
        require(user, EXPORT, "build preference pairs")
    behaviour = Behaviour.objects.filter(pk=behaviour_id).first()
    if behaviour is None:
        raise NotFound(f"behaviour {behaviour_id} does not exist")
    train = behaviour.tasks.filter(split=BehaviourTask.Split.TRAIN).select_related("candidate")
    tasks = {t.candidate_id: t for t in train}
    # The provenance rule: accepted, current, held out nowhere, graded.
    admission = Admission(behaviour, Use.TRAIN, (t.candidate for t in tasks.values()))
    rollouts = {
        r.pk: r
        for r in Rollout.objects.filter(
            candidate_id__in=admission.admitted_tasks,
            grade=Rollout.Grade.GRADED,
            trajectory__isnull=False,
        ).select_related("trajectory__source")
        if admission.rollout_ok(r.candidate_id, RolloutState(graded=True, reward=r.reward))
    }
    chosen = candidate_pairs(
        [_core(r, tasks[r.candidate_id]) for r in rollouts.values()], per_task=per_task
    )
    with transaction.atomic():
        have = set(behaviour.pairs.values_list("rollout_a_id", "rollout_b_id"))
        new = []
        for pair in chosen:
            a, b = int(pair.a.trajectory_id), int(pair.b.trajectory_id)
            if (a, b) in have:
                continue
            preferred = pair.preferred
            new.append(
                PreferencePair(
                    behaviour=behaviour,
                    task=tasks[rollouts[a].candidate_id],
                    rollout_a_id=a,
                    rollout_b_id=b,
                    basis=pair.basis.value,
                    reward_gap=pair.reward_gap,
                    preferred_id=int(preferred.trajectory_id) if preferred else None,
                )
            )
        new = PreferencePair.objects.bulk_create(new)  # ids follow the core's order
        if new:
            audit_event_record(
                actor=user,
                verb="behaviour.pairs",
                target=behaviour,
                before={"pairs": len(have)},
                after={"pairs": len(have) + len(new), "added": [p.pk for p in new]},
            )
    return new
