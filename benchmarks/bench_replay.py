"""Replay cost: compute and store once, then look up any step in constant time.

    .venv/bin/python benchmarks/bench_replay.py [--steps 20000] [--corpus ../shared/corpus]

Prints replay time and stored size for the corpus and a generated long session, `state_at` time at
the first, middle and last step, and the stepper page's server time at step 1 and at the last step
(median of repeated requests through Django's test client, logged in as an annotator).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from _django import REPO, setup


def _median_ms(fn, repeat: int = 25) -> float:
    fn()  # warm caches the way a second visitor would find them
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    args = parser.parse_args()
    var = setup()
    from django.contrib.auth.models import Group, User
    from django.test import Client
    from generate_claude_code import generate

    from trajectories.models import Replay, Trajectory
    from trajectories.replay_reads import step_state
    from trajectories.services.ingest import ingest_run_create, ingest_run_execute
    from trajectories.services.replay import replay_compute

    def ingest(paths):
        return ingest_run_execute(run_id=ingest_run_create(paths=paths).id)

    def replay_all(ids):
        started = time.perf_counter()
        for i in ids:
            replay_compute(trajectory_id=i)
        took = time.perf_counter() - started
        replays = Replay.objects.filter(trajectory_id__in=ids)
        return took, sum(r.stored_bytes for r in replays), replays.count()

    print(f"{'input':<44} {'trajectories':>12} {'steps':>7} {'replay s':>9} {'stored MB':>10}")
    if args.corpus.is_dir():
        summary = ingest([args.corpus])
        took, size, n = replay_all(summary.trajectory_ids)
        steps = sum(
            Trajectory.objects.filter(id__in=summary.trajectory_ids).values_list(
                "steps_count", flat=True
            )
        )
        failed = Trajectory.objects.filter(status=Trajectory.Status.REPLAY_FAILED).count()
        print(
            f"{'corpus (all formats)':<44} {n:>12} {steps:>7} {took:>9.2f} {size / 1e6:>10.2f}"
            + (f"  ({failed} failed)" if failed else "")
        )
    big = var / "long.jsonl"
    big.write_text(generate(args.steps))
    [tid] = ingest([big]).trajectory_ids
    took, size, _ = replay_all([tid])
    t = Trajectory.objects.get(id=tid)
    print(
        f"{'generated Claude Code session':<44} {1:>12} {t.steps_count:>7} "
        f"{took:>9.2f} {size / 1e6:>10.2f}"
    )

    last = t.steps_count - 1
    print("\nstate_at(step) from the database, median of 25 (ms):")
    for label, step in (("first", 0), ("middle", last // 2), ("last", last)):
        print(f"  {label:<7} step {step:>6}: {_median_ms(lambda s=step: step_state(t, s)):6.2f}")

    user = User.objects.create_user("bench", password="x")
    user.groups.add(Group.objects.get(name="annotator"))
    client = Client()
    client.force_login(user)

    def page(step: int):
        response = client.get(f"/trajectories/{tid}/steps/{step}/")
        assert response.status_code == 200, response.status_code
        return response

    first = _median_ms(lambda: page(1))
    late = _median_ms(lambda: page(last))
    print(
        "\nstepper page server time, median of 25 (ms): "
        f"step 1 {first:.1f} · step {last} {late:.1f} "
        f"· ratio {late / first:.2f}"
    )


if __name__ == "__main__":
    main()
