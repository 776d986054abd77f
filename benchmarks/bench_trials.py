"""The trial matrix's cost beside its floor, on the four sample tasks.

    .venv/bin/python benchmarks/bench_trials.py            # fresh image builds
    .venv/bin/python benchmarks/bench_trials.py --cached   # images as cached (matrix time only)

Per task: an image build, the floor (one fresh container running the recorded check once,
created and removed), and the whole matrix (check in image, oracle x3, no-op, controls) with
jobs=1; then all matrices with jobs=2. Target from the issue: the matrix within 1.5x of
(build + trials x floor) / parallelism.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tasks_review.core.docker import BaseImageSpec, Engine, bootstrap  # noqa: E402
from tasks_review.core.mining import find_repair_candidates  # noqa: E402
from tasks_review.core.taskfiles import SourceTrace, write_task  # noqa: E402
from tasks_review.core.trials.matrix import prepare, run_matrices, run_matrix  # noqa: E402
from tasks_review.core.trials.model import TrialStatus  # noqa: E402
from trajectories.core.blobs import MemoryBlobs  # noqa: E402
from trajectories.core.formats import load  # noqa: E402
from trajectories.core.replay import StateIndex, replay  # noqa: E402


def _task(sample: Path, out: Path, base: str) -> Path:
    loaded = load(sample)
    blobs = MemoryBlobs()
    result = replay(loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs)
    [candidate], _ = find_repair_candidates(result, StateIndex.build(result), blobs, loaded.atif)
    return write_task(
        out / sample.parent.name,
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate("0" * 64, candidate),
        source_model=None,
        base_image=base,
        task_name=f"bench/{sample.parent.name}",
    )


def _floor(engine: Engine, prepared, run_id: str) -> float:
    spec = prepared.spec
    samples = []
    for _ in range(5):
        started = time.monotonic()
        with engine.sandbox(prepared.image.tag, run_id=run_id, limits=prepared.limits) as box:
            box.exec(["bash", "-lc", spec.command], workdir=spec.workdir)
        samples.append(time.monotonic() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cached", action="store_true", help="reuse cached images")
    cached = parser.parse_args().cached
    engine = Engine.from_env()
    base = bootstrap(BaseImageSpec(cache_dir=REPO / "var" / "cache")).pinned_ref
    out = Path(tempfile.mkdtemp(prefix="traj2env-bench-trials-"))
    samples = {
        "python (unittest)": next((REPO / "samples" / "claude-code").glob("*.jsonl")),
        "node (npm test)": next((REPO / "samples" / "codex").glob("*.jsonl")),
        "python (pi, unittest)": next((REPO / "samples" / "pi").glob("*.jsonl")),
        "node (atif, node --test)": next((REPO / "samples" / "atif").glob("*.json")),
    }
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    rows, prepared_all = [], []
    for name, sample in samples.items():
        task = _task(sample, out, base)
        if not cached:
            # A unique marker file in the build context makes this build fresh, not a cache hit.
            (task / "environment" / "project" / ".bench").write_text(run_id)
        started = time.monotonic()
        prepared = prepare(task, engine, run_id=run_id)
        build = time.monotonic() - started
        floor = _floor(engine, prepared, run_id)
        result = run_matrix(prepared, engine=engine, run_id=run_id)
        graded = [t for t in result.trials if t.status is TrialStatus.GRADED]
        per_trial = statistics.median(t.seconds for t in graded)
        rows.append(
            (name, build, floor, len(graded), per_trial, result.wall_seconds, str(result.status))
        )
        prepared_all.append(prepared)
    started = time.monotonic()
    run_matrices(prepared_all, jobs=2, engine=engine, run_id=run_id)
    parallel = time.monotonic() - started

    print(
        f"{'task':<26} {'build s':>8} {'floor s':>8} {'trials':>7} {'per trial s':>12} "
        f"{'matrix s':>9} {'target s':>9}  status"
    )
    for name, build, floor, n, per_trial, wall, status in rows:
        target = 1.5 * (build + n * floor)
        print(
            f"{name:<26} {build:>8.1f} {floor:>8.2f} {n:>7} {per_trial:>12.2f} "
            f"{wall + build:>9.1f} {target:>9.1f}  {status}"
        )
    sequential = sum(row[5] for row in rows)
    target2 = 1.5 * sum(row[3] * row[2] for row in rows) / 2
    print(
        f"\nall matrices (images built): jobs=1 {sequential:.1f} s · jobs=2 {parallel:.1f} s "
        f"· target for jobs=2 (trials x floor / 2, x1.5) {target2:.1f} s"
    )


if __name__ == "__main__":
    main()
