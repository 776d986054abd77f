"""Task image builds beside their one-COPY floor, and the trial matrix, on the sample tasks.

    .venv/bin/python benchmarks/bench_trials.py                     # this checkout's code
    .venv/bin/python benchmarks/bench_trials.py --code ../before    # another checkout's code
    .venv/bin/python benchmarks/bench_trials.py --builds 5 --no-matrix --only wheels
    .venv/bin/python benchmarks/bench_trials.py --parallel          # jobs=1 against jobs=2

Per sample task (the four samples, plus the pytest task with its dated wheels when the
wheelhouse has them): the candidate's image built fresh (a marker file in the build context
makes every build a new one) alternating with the floor, ``FROM <the same base>`` plus one
``COPY`` of the same project to ``/app``, ``--builds`` times each, medians compared; then the
whole matrix (check in the image, oracle x3, no-op, every control) with its image built.
``--code DIR`` imports traj2env from DIR instead (a checkout of an older commit): the same
measurement of that code, base image recipe and Dockerfile included. A task with wheels is
first built with its wheel layers cold; later builds find them in the builder's cache, as the
next task with the same wheels does.

``--parallel`` instead times the matrices of the Python (claude-code) and the Node (codex)
sample one after the other (jobs=1) and then together (jobs=2, ``run_matrices``), alternating
the order ``--rounds`` times: on two cores the parallel wall should be clearly below the
sequential one (unequal matrices keep it above half). The suite only checks that both are kept
and nothing is left running: walls measured while other tests share the cores prove nothing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _setup(code: Path) -> None:
    sys.path.insert(0, str(code))


def _task(sample: Path, out: Path, base: str, packages=None) -> Path:
    from tasks_review.core.mining import find_repair_candidates
    from tasks_review.core.taskfiles import SourceTrace, write_task
    from trajectories.core.blobs import MemoryBlobs
    from trajectories.core.formats import load
    from trajectories.core.replay import StateIndex, replay

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


def _pytest_task(out: Path, base: str, cache: Path) -> Path | None:
    """The trial tests' pytest task with its dated wheels, when the wheelhouse has them."""
    from datetime import UTC, datetime

    from tasks_review.core.mining import RepairCandidate, candidate_key
    from tasks_review.core.taskfiles import PythonPackages, SourceTrace, write_task
    from tasks_review.core.trials.wheelhouse import WheelhouseUnavailable, build_wheelhouse
    from trajectories.core.blobs import MemoryBlobs

    start = {
        "requirements-dev.txt": b"pytest>=8,<9\n",
        "shop/__init__.py": b"",
        "shop/cart.py": b"def total(prices):\n    return sum(prices[1:])\n",
        "tests/test_cart.py": b"from shop.cart import total\n\n\ndef test_total():\n"
        b"    assert total([1, 2, 3]) == 6\n\n\ndef test_empty():\n    assert total([]) == 0\n",
    }
    fix = {"shop/cart.py": b"def total(prices):\n    return sum(prices)\n"}
    try:
        house = build_wheelhouse(
            ["pytest<9,>=8"],
            before=datetime(2025, 6, 1, tzinfo=UTC),
            cache_dir=cache / "wheelhouse",
            offline=True,
        )
    except WheelhouseUnavailable as exc:
        print(f"(no pytest task: {exc})")
        return None
    blobs = MemoryBlobs()
    start_files = {p: blobs.put(d) for p, d in start.items()}
    ref_files = {p: blobs.put(d) for p, d in {**start, **fix}.items()}
    command = "python3 -m pytest -q"
    candidate = RepairCandidate(
        command=command,
        task_command=command,
        cwd=".",
        check_cwd=".",
        language="python",
        runner="pytest",
        check_kind="test",
        root="/work/shop",
        project_dir="/app",
        fail_command_index=0,
        pass_command_index=1,
        fail_step_index=2,
        pass_step_index=4,
        fail_step_id=3,
        pass_step_id=5,
        fail_exit_code=1,
        failing_output="1 failed",
        start_files=start_files,
        ref_files=ref_files,
        added=(),
        modified=("shop/cart.py",),
        deleted=(),
        test_paths=("tests/test_cart.py",),
        fix_edits_tests=False,
        unknown_paths=(),
        instruction=f"# Make the failing check pass\n\nRun `{command}`; it fails.\n",
        key=candidate_key(command, ".", start_files, ref_files),
    )
    packages = PythonPackages(
        requirements=("pytest<9,>=8",),
        lock=house.lock,
        wheels=house.wheels,
        resolved_before=house.resolved_before.isoformat(),
        date_source="trajectory",
    )
    return write_task(
        out / "pytest-wheels",
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate("0" * 64, candidate),
        source_model=None,
        base_image=base,
        task_name="bench/pytest-wheels",
        python_packages=packages,
    )


def _fresh(context: Path, marker: str) -> None:
    # A new file in the project: the content hash, and so the image, is new every time.
    (context / "project" / ".bench").write_text(marker)


def _build_pair(engine, task: Path, base: str, scratch: Path, builds: int):
    """(candidate build seconds, floor build seconds) medians; the last candidate image kept."""
    floor_dir = scratch / f"floor-{task.name}"
    shutil.copytree(task / "environment" / "project", floor_dir / "project")
    (floor_dir / "Dockerfile").write_text(f"FROM {base}\nCOPY project/ /app/\n")
    candidate, floor = [], []
    image = None
    for i in range(builds):
        for kind in ("floor", "candidate") if i % 2 else ("candidate", "floor"):
            marker = uuid.uuid4().hex
            context = floor_dir if kind == "floor" else task / "environment"
            _fresh(context, marker)
            built = engine.build(context)
            assert not built.reused
            (floor if kind == "floor" else candidate).append(built.seconds)
            if kind == "floor" or i < builds - 1:
                # noprune: a task's wheel layers stay cached for the next build, as they do
                # for the next task with the same wheels
                engine.client.images.remove(built.image_id, force=True, noprune=True)
            else:
                image = built
    return statistics.median(candidate), statistics.median(floor), candidate, floor, image


def _s(seconds: list[float]) -> str:
    return "[" + ", ".join(f"{s:.1f}" for s in seconds) + "]"


def _parallel(engine, tasks: dict[str, Path], rounds: int) -> None:
    from tasks_review.core.trials.matrix import prepare, run_matrices, run_matrix

    chosen = [tasks[n] for n in tasks if n.startswith(("python (claude", "node (codex"))]
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    prepared = [prepare(task, engine, run_id=run_id) for task in chosen]
    walls: dict[str, list[float]] = {"jobs=1": [], "jobs=2": []}

    def sequential() -> list[str]:
        return [str(run_matrix(t, engine=engine, run_id=run_id).status) for t in prepared]

    def parallel() -> list[str]:
        results = run_matrices(prepared, jobs=2, engine=engine, run_id=run_id)
        return [str(r.status) for r in results]

    for i in range(rounds):
        order = [("jobs=1", sequential), ("jobs=2", parallel)]
        for label, run in order if i % 2 == 0 else order[::-1]:
            started = time.monotonic()
            statuses = run()
            walls[label].append(time.monotonic() - started)
            print(f"  {label}: {walls[label][-1]:.1f} s {statuses}", flush=True)
    one, two = statistics.median(walls["jobs=1"]), statistics.median(walls["jobs=2"])
    print(f"\n{'jobs':<8} {'median s':>9}  walls")
    print(f"{'1':<8} {one:>9.1f}  {_s(walls['jobs=1'])}")
    print(f"{'2':<8} {two:>9.1f}  {_s(walls['jobs=2'])}")
    print(f"jobs=2 / jobs=1: {two / one:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", type=Path, default=HERE, help="the checkout to import")
    parser.add_argument("--builds", type=int, default=3, help="builds of each image")
    parser.add_argument("--no-matrix", action="store_true", help="image builds only")
    parser.add_argument("--cache", type=Path, default=Path("/work/main/var/cache"))
    parser.add_argument("--only", default="", help="only the tasks whose name has this")
    parser.add_argument("--parallel", action="store_true", help="jobs=1 against jobs=2 only")
    parser.add_argument("--rounds", type=int, default=2, help="with --parallel: rounds of both")
    options = parser.parse_args()
    _setup(options.code.resolve())
    from groundwork.core.docker import BaseImageSpec, Engine, bootstrap
    from tasks_review.core.trials.matrix import prepare, run_matrix

    engine = Engine.from_env()
    base = bootstrap(BaseImageSpec(cache_dir=options.cache), engine=engine).pinned_ref
    out = Path(tempfile.mkdtemp(prefix="traj2env-bench-trials-"))
    print(f"code {options.code.resolve()}  base {base}")
    samples = {
        "python (claude-code, unittest)": next((HERE / "samples" / "claude-code").glob("*.jsonl")),
        "node (codex, npm test)": next((HERE / "samples" / "codex").glob("*.jsonl")),
        "python (pi, unittest)": next((HERE / "samples" / "pi").glob("*.jsonl")),
        "node (atif, node --test)": next((HERE / "samples" / "atif").glob("*.json")),
    }
    tasks = {name: _task(sample, out, base) for name, sample in samples.items()}
    wheels = _pytest_task(out, base, options.cache)
    if wheels is not None:
        tasks["python (pytest + wheels)"] = wheels
    tasks = {name: task for name, task in tasks.items() if options.only in name}
    if options.parallel:
        _parallel(engine, tasks, options.rounds)
        return
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    # All the builds first, then the matrices: a matrix's containers (and their removal) must
    # not share the engine with a build being timed.
    builds = {}
    for name, task in tasks.items():
        # Build steps after FROM (continuation lines start with a space).
        steps = sum(
            1
            for line in (task / "environment" / "Dockerfile").read_text().splitlines()
            if line[:1].isalpha() and not line.startswith("FROM")
        )
        cand, floor, cands, floors, image = _build_pair(engine, task, base, out, options.builds)
        builds[name] = (steps, cand, floor, image)
        print(f"  {name}: candidate {_s(cands)}, floor {_s(floors)}", flush=True)
    rows = []
    for name, task in tasks.items():
        steps, cand, floor, image = builds[name]
        matrix = status = None
        if not options.no_matrix:
            started = time.monotonic()
            result = run_matrix(prepare(task, engine, run_id=run_id), engine=engine, run_id=run_id)
            matrix, status = time.monotonic() - started, str(result.status)
            print(f"  {name}: matrix {matrix:.1f} s, {status}", flush=True)
        engine.client.images.remove(image.image_id, force=True)
        rows.append((name, steps, cand, floor, matrix, status))

    print(
        f"\n{'task':<32} {'steps':>5} {'image s':>8} {'floor s':>8} {'x floor':>8}"
        f" {'matrix s':>9}  status"
    )
    for name, steps, cand, floor, matrix, status in rows:
        shown = f"{matrix:>9.1f}" if matrix is not None else f"{'-':>9}"
        print(
            f"{name:<32} {steps:>5} {cand:>8.1f} {floor:>8.1f} {cand / floor:>8.2f}"
            f" {shown}  {status or ''}"
        )


if __name__ == "__main__":
    main()
