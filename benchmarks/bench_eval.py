"""Evaluating one behaviour over 10,000 rollouts, beside reading their facts from the database.

    .venv/bin/python benchmarks/bench_eval.py [--rollouts 10000] [--tasks 200] [--repeat 3]

Generates rollouts of a few shapes (a proper repair, a claim with no evidence, a repair that
edits the test, a long session of reads), each with the facts the harness scores stored on the
row as the rollout import stores them. Then, in one run and alternating, it times:
- read: every graded rollout's facts loaded from the database and turned back into
  ``TrajectoryFacts`` (the floor: what any evaluation must do);
- evaluate: ``eval_run_execute`` of failing-test-repair over the same rollouts (read, score with
  the harness, write one result row each, summarise).
Prints the medians and their ratio (the goal: evaluate within 2x of read).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from _django import setup

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def sessions():
    from tests.training.core.helpers import Session

    def repair(i: int):
        s = Session()
        s.run(f"pytest tests/test_m{i % 7}.py", output="1 failed", exit_code=1)
        s.read(f"src/m{i % 7}.py", "def f():\n    return 0\n")
        s.edit(f"src/m{i % 7}.py", "return 0", "return 1")
        s.run(f"pytest tests/test_m{i % 7}.py", output="1 passed")
        return s.say("Fixed; the test passes.")

    def bluff(i: int):
        s = Session()
        s.read(f"src/m{i % 7}.py", "def f():\n    return 0\n")
        s.edit(f"src/m{i % 7}.py", "return 0", "return 1")
        return s.say("Done, all tests pass.")

    def tamper(i: int):
        s = Session()
        s.run("pytest tests/test_m.py", output="1 failed", exit_code=1)
        s.edit("tests/test_m.py", "assert f() == 1", "assert True")
        s.run("pytest tests/test_m.py", output="1 passed")
        return s.say("Fixed.")

    def long(i: int):
        s = Session()
        for n in range(40):
            s.read(f"src/pkg{n % 5}/mod{n}.py", f"x = {n}\n")
            s.run(f"grep -rn name{n} src", output=f"src/mod{n}.py:1:x")
        s.edit("src/pkg0/mod0.py", "x = 0", "x = 1")
        s.run("pytest -q tests/test_mod0.py", output="3 passed")
        return s.say("Fixed after a long look around.")

    return [repair, bluff, tamper, long]


def populate(rollouts: int, tasks: int) -> int:
    from tasks_review.models import Candidate
    from tests.tasks_review.factories import make_candidate
    from training.models import Behaviour, Rollout
    from training.services.behaviours import behaviour_catalogue_seed, behaviour_tasks_add

    behaviour_catalogue_seed()
    behaviour = Behaviour.objects.get(slug="failing-test-repair")
    candidates = [
        make_candidate(trials=False, payload={"test_paths": ["tests/test_m.py"]})
        for _ in range(tasks)
    ]
    behaviour_tasks_add(
        user=None, behaviour_id=behaviour.pk, candidate_ids=[c.pk for c in candidates]
    )
    makers = sessions()
    # A handful of distinct facts per shape, reused: generating 10,000 replays would time the
    # generator, not the evaluation.
    facts = [maker(i).facts().to_dict() for maker in makers for i in range(5)]
    rng = random.Random(7)
    rows = []
    for n in range(rollouts):
        candidate: Candidate = candidates[n % tasks]
        rows.append(
            Rollout(
                candidate=candidate,
                trial_name=f"bench-{n}",
                agent=("oracle", "claude-code", "codex")[n % 3],
                model="m",
                reward=rng.choice([0.0, 1.0]),
                grade=Rollout.Grade.GRADED,
                facts=facts[rng.randrange(len(facts))],
            )
        )
    Rollout.objects.bulk_create(rows, batch_size=1000)
    return behaviour.pk


def read_all() -> int:
    from training.core.facts import TrajectoryFacts
    from training.models import Rollout

    n = 0
    rows = Rollout.objects.filter(grade=Rollout.Grade.GRADED, facts__isnull=False)
    for data in rows.values_list("facts", flat=True).iterator(chunk_size=500):
        TrajectoryFacts.from_dict(data)
        n += 1
    return n


def evaluate(behaviour_id: int) -> int:
    from training.services.evals import eval_run_create, eval_run_execute

    run = eval_run_execute(run_id=eval_run_create(user=None, behaviour_id=behaviour_id).pk)
    assert run is not None and run.status == "done", run
    return run.done


def _runs(seconds: list[float]) -> str:
    return ", ".join(f"{s:.2f}" for s in seconds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollouts", type=int, default=10_000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    setup()
    started = time.perf_counter()
    behaviour_id = populate(args.rollouts, args.tasks)
    print(f"populated {args.rollouts} rollouts in {time.perf_counter() - started:.1f} s")
    reads, evals = [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        assert read_all() == args.rollouts
        reads.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert evaluate(behaviour_id) == args.rollouts
        evals.append(time.perf_counter() - started)
    read, ev = statistics.median(reads), statistics.median(evals)
    print(f"read facts from the database : {read:.2f} s  (runs: {_runs(reads)})")
    print(f"eval run (read, score, write) : {ev:.2f} s  (runs: {_runs(evals)})")
    print(f"ratio                          : {ev / read:.2f}x  (goal: within 2x)")


if __name__ == "__main__":
    main()
