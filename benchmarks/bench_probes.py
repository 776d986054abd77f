"""What the hidden equivalence probes cost: the trial matrix with them against the same matrix
without them (verifier v2's grading), and the share of sample tasks they grade.

    .venv/bin/python benchmarks/bench_probes.py [--rounds 2] [--only claude-code]

Per bundled sample: its task written and its image built once; the check in the image timed,
with the probes' own part (trace, derive, reference twice, start once) timed apart; then the
whole matrix (oracle x3, no-op, every control) run alternately with the probes (v3) and with
them removed from the reference facts (v2's grading, the same grader otherwise), ``--rounds``
times each, medians compared. Alternating in one process keeps the two sides under the same
load, so the ratio holds better than the seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

SAMPLES = ("claude-code", "codex", "pi", "atif")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default="")
    parser.add_argument("--cache", type=Path, default=HERE / "var" / "cache")
    options = parser.parse_args()
    from benchmarks.bench_trials import _task
    from groundwork.core.docker import BaseImageSpec, Engine, bootstrap
    from tasks_review.core.trials import probes as probe_module
    from tasks_review.core.trials.baseline import check_in_image
    from tasks_review.core.trials.matrix import prepare, run_matrix

    engine = Engine.from_env()
    base = bootstrap(BaseImageSpec(cache_dir=options.cache), engine=engine).pinned_ref
    out = Path(tempfile.mkdtemp(prefix="traj2env-bench-probes-"))
    spent: list[float] = []
    real = probe_module.probes_in_image

    def timed(*args, **kwargs):
        started = time.monotonic()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(time.monotonic() - started)

    import tasks_review.core.trials.baseline as baseline_module

    baseline_module.probes_in_image = timed  # type: ignore[assignment]
    rows = []
    for fmt in SAMPLES:
        if options.only not in fmt:
            continue
        sample = next((HERE / "samples" / fmt).glob("*.json*"))
        task = _task(sample, out, base)
        run_id = f"bench-{uuid.uuid4().hex[:8]}"
        prepared = prepare(task, engine, run_id=run_id)
        spent.clear()
        started = time.monotonic()
        baseline = check_in_image(prepared, engine=engine, run_id=run_id)
        check = time.monotonic() - started
        probes = baseline.facts.probes
        without = dataclasses.replace(
            baseline, facts=dataclasses.replace(baseline.facts, probes=None)
        )
        walls: dict[str, list[float]] = {"v2": [], "v3": []}
        # Per graded trial of the probed matrices: the probe phase (grade.py's own clock in the
        # container) and the whole trial, so the probes' share holds whatever the load.
        phases: list[tuple[float, float]] = []
        for i in range(options.rounds):
            order = [("v3", baseline), ("v2", without)]
            for label, chosen in order if i % 2 == 0 else order[::-1]:
                started = time.monotonic()
                result = run_matrix(prepared, engine=engine, run_id=run_id, baseline=chosen)
                walls[label].append(time.monotonic() - started)
                assert result.kept, (fmt, label, result.reasons)
                if label == "v3":
                    phases += [
                        (float(t.detail.get("probe_seconds") or 0.0), t.seconds)
                        for t in result.trials
                        if t.detail.get("probe_seconds") is not None
                    ]
                print(f"  {fmt} {label}: {walls[label][-1]:.1f} s", flush=True)
        rows.append((fmt, probes, check, spent[0] if spent else 0.0, walls, phases))
    print(
        f"\n{'sample':<12} {'grading':<12} {'probes':>6} {'discr.':>6} {'check s':>8}"
        f" {'probes s':>8} {'v2 s':>7} {'v3 s':>7} {'v3/v2':>6}"
        f" {'trials':>6} {'probe/grading s':>15} {'trial s':>7} {'share':>6}"
    )
    kinds = []
    for fmt, probes, check, making, walls, phases in rows:
        v2, v3 = statistics.median(walls["v2"]), statistics.median(walls["v3"])
        kinds.append(probes.kind)
        probe_s = statistics.median(p for p, _ in phases) if phases else 0.0
        trial_s = statistics.median(t for _, t in phases) if phases else 0.0
        part = sum(p for p, _ in phases) / max(sum(t for _, t in phases), 1e-9)
        print(
            f"{fmt:<12} {probes.kind:<12} {len(probes.probes):>6} {probes.discriminating:>6}"
            f" {check:>8.1f} {making:>8.1f} {v2:>7.1f} {v3:>7.1f} {v3 / v2:>6.2f}"
            f" {len(phases):>6} {probe_s:>15.2f} {trial_s:>7.1f} {part:>6.1%}"
        )
    share = sum(k == "equivalence" for k in kinds)
    print(f"\nequivalence-graded: {share} of {len(kinds)} sample tasks")


if __name__ == "__main__":
    main()
