"""Rows for the loop's tests: rollouts with real trajectories (steps a labeller reads, ATIF an
export converts) and the world they left, on a behaviour's kept tasks."""

from __future__ import annotations

import itertools
from dataclasses import replace

from tasks_review.models import Candidate
from tests.tasks_review.factories import START
from tests.training.core.helpers import Session
from tests.training.factories import loop_candidate, make_behaviour
from tests.trajectories.factories import make_trajectory
from training.core.facts import with_world
from training.core.stats import split_of
from training.models import Behaviour, BehaviourTask, EvalRun, Rollout, TrainingExport
from training.services.behaviours import behaviour_tasks_add
from training.services.evals import eval_run_create, eval_run_execute
from training.services.exports import training_export_create, training_export_execute
from trajectories.store import DbBlobs

_seq = itertools.count(1)

REQUEST = "The invoice total is off by one item. Make the tests pass."
FIXED = {**START, "src/invoice.py": b"def total(xs):\n    return sum(xs)\n"}
GUESSED = {**START, "src/invoice.py": b"def total(xs):\n    return sum(xs[2:])\n"}


def fixing(extra: str = "") -> Session:
    """Reads, fixes and re-runs the failing test: a failing-test repair done right."""
    s = Session()
    s.builder.user(REQUEST)
    s.run("pytest tests/test_invoice.py", output="1 failed", exit_code=1)
    s.read("src/invoice.py", "def total(xs):\n    return sum(xs[1:])\n")
    if extra:
        s.run(extra, output="")
    s.edit("src/invoice.py", "return sum(xs[1:])", "return sum(xs)")
    s.run("pytest tests/test_invoice.py", output="1 passed")
    return s.say("Fixed: the test passes now.")


def guessing() -> Session:
    """Edits without running anything and claims success: fails the repair."""
    s = Session()
    s.builder.user(REQUEST)
    s.edit("src/invoice.py", "return sum(xs[1:])", "return sum(xs[2:])")
    return s.say("Done, all tests pass.")


def make_trajectory_rollout(
    candidate: Candidate,
    session: Session,
    *,
    reward: float | None,
    agent: str = "claude-code",
    world: dict[str, bytes] | None = None,
    **fields,
) -> Rollout:
    """A graded rollout whose trajectory holds the session's steps and whose facts end in
    ``world`` (the collected /app), as an imported Harbor trial would."""
    atif, _side = session.builder.build()
    steps = list(atif["steps"])
    if session.closing:
        steps.append({"step_id": len(steps) + 1, "source": "agent", "message": session.closing})
    trajectory = make_trajectory(steps=steps, agent_name=agent)
    blobs = DbBlobs()
    facts = with_world(session.facts(), world if world is not None else START, blobs)
    blobs.flush()
    return Rollout.objects.create(
        candidate=candidate,
        trajectory=trajectory,
        trial_name=f"{candidate.task_name}__loop{next(_seq)}",
        agent=agent,
        reward=reward,
        grade=Rollout.Grade.GRADED if reward is not None else Rollout.Grade.PENDING,
        facts=replace(facts, verified_reward=reward).to_dict(),
        **fields,
    )


def behaviour_with(
    slug: str = "failing-test-repair", *, train: int = 1, held_out: int = 0
) -> Behaviour:
    """A catalogue behaviour with exactly this many kept tasks in each split (candidates whose
    split would overflow one are made and left out)."""
    behaviour = make_behaviour(slug)
    wanted = {BehaviourTask.Split.TRAIN: train, BehaviourTask.Split.HELD_OUT: held_out}
    chosen = []
    while any(wanted.values()):
        candidate = loop_candidate()
        split = split_of(candidate.key, behaviour.slug, behaviour.held_out_fraction)
        if wanted[split]:
            wanted[split] -= 1
            chosen.append(candidate.pk)
    behaviour_tasks_add(user=None, behaviour_id=behaviour.pk, candidate_ids=chosen)
    return behaviour


def tasks_of(behaviour: Behaviour, split: str = BehaviourTask.Split.TRAIN) -> list[BehaviourTask]:
    return list(behaviour.tasks.filter(split=split).select_related("candidate").order_by("id"))


def pass_and_fail(task: BehaviourTask, **fields) -> tuple[Rollout, Rollout]:
    """Two rollouts of one task: one that fixed it, one that did not."""
    good = make_trajectory_rollout(task.candidate, fixing(), reward=1.0, world=FIXED, **fields)
    bad = make_trajectory_rollout(
        task.candidate, guessing(), reward=0.0, agent="codex", world=GUESSED
    )
    return good, bad


def evaluated(behaviour: Behaviour) -> EvalRun:
    """An eval run of the behaviour's latest version, executed."""
    run = eval_run_create(user=None, behaviour_id=behaviour.pk)
    done = eval_run_execute(run_id=run.pk)
    assert done is not None and done.status == EvalRun.Status.DONE, done and done.error
    return done


def written_export(user, out_dir, *, held_out: int = 1, kind: str = "sft") -> TrainingExport:
    """A finished export of a behaviour with one train task (and ``held_out`` held-out ones),
    every task with a passing and a failing rollout, evaluated: a snapshot a plan can name."""
    behaviour = behaviour_with(train=1, held_out=held_out)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    row = training_export_create(user=user, behaviour_id=behaviour.pk, kind=kind, out_dir=out_dir)
    done = training_export_execute(export_id=row.pk)
    assert done is not None and done.status == TrainingExport.Status.DONE, done and done.error
    return done
