"""Ingest throughput beside bare atif-make conversion of the same files, measured in one run.

    .venv/bin/python benchmarks/bench_ingest.py [--steps 20000] [--corpus ../shared/corpus]
        [--whole 5] [--sessions 10000]

Three tables, each measuring both sides in the same run:

* in process: "bare" is atif-make's convert + to_dict alone; "ingest" is everything
  `manage.py ingest` does per file: read, hash, detect, convert, validate with Harbor, keep side
  data, and store the raw bytes, ATIF and one row per step in the database;
* whole process (``--whole N`` runs of each, alternating): `atif-make convert FILE -o OUT` against
  `manage.py ingest FILE` on a fresh database, start-up included, as the environment runs Python
  and again with a warm bytecode cache (what an installed deployment has);
* one folder of ``--sessions`` small Claude Code sessions, as in `~/.claude/projects/<project>/`,
  ingested at several sizes to show the cost per session staying flat, beside atif-make's own
  conversion of one of those sessions inside the folder and alone.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _django import REPO, setup

PYTHON = REPO / ".venv" / "bin" / "python"
ATIF_MAKE = REPO / ".venv" / "bin" / "atif-make"


def _bare(files: list[Path]) -> float:
    from atif_make import convert

    started = time.perf_counter()
    for f in files:
        convert(f)[0].to_dict()
    return time.perf_counter() - started


def _ingest(paths: list[Path]):
    took, _, summary = _ingest_timed(paths)
    return took, summary


def _ingest_timed(paths: list[Path]):
    """Wall and CPU seconds of one ingest run in this process, and its summary."""
    from trajectories.services.ingest import ingest_run_create, ingest_run_execute

    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    summary = ingest_run_execute(run_id=ingest_run_create(paths=paths).id)
    return time.perf_counter() - started, time.process_time() - cpu, summary


def _steps(ids: list[int]) -> int:
    from trajectories.models import Trajectory

    return sum(Trajectory.objects.filter(id__in=ids).values_list("steps_count", flat=True))


def in_process(big: Path, corpus: Path) -> None:
    rows = []
    size = big.stat().st_size
    bare = min(_bare([big]) for _ in range(2))
    took, summary = _ingest([big])
    steps = _steps(summary.trajectory_ids)
    rows.append((f"generated Claude Code, {steps} steps", size, steps, bare, took))

    if corpus.is_dir():
        from trajectories.core.formats import detect

        files = sorted(p for p in corpus.rglob("*") if p.is_file())
        convertible = [p for p in files if detect(p) in ("claude-code", "codex")]
        csize = sum(p.stat().st_size for p in convertible)
        cbare = _bare(convertible)
        ctook, csummary = _ingest(convertible)
        rows.append(
            (
                f"corpus Claude Code + Codex, {len(convertible)} files",
                csize,
                _steps(csummary.trajectory_ids),
                cbare,
                ctook,
            )
        )
        atook, asummary = _ingest([corpus])  # everything else in the corpus (pi, ATIF, skips)
        asize = sum(p.stat().st_size for p in files)
        rows.append(
            (
                f"whole corpus, {len(files)} files ({asummary.ingested} new)",
                asize,
                _steps(asummary.trajectory_ids),
                None,
                atook,
            )
        )

    print("\nIn process\n")
    print("| input | MB | steps | bare s | ingest s | MB/s | steps/s | x bare |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, nbytes, steps, bare_s, ingest_s in rows:
        ratio = f"{ingest_s / bare_s:.2f}" if bare_s else "—"
        bare_txt = f"{bare_s:.2f}" if bare_s else "—"
        print(
            f"| {name} | {nbytes / 1e6:.1f} | {steps:,} | {bare_txt} | {ingest_s:.2f} | "
            f"{nbytes / 1e6 / ingest_s:.1f} | {steps / ingest_s:,.0f} | {ratio} |"
        )


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _whole_once(big: Path, env: dict[str, str], work: Path) -> tuple[tuple, tuple]:
    out = work / "out.trajectory.json"
    bare = _timed([str(ATIF_MAKE), "convert", "-q", str(big), "-o", str(out)], env)
    out.unlink()
    var = Path(tempfile.mkdtemp(dir=work))
    db_env = dict(env, TRAJ2ENV_VAR=str(var))
    subprocess.run([str(PYTHON), "manage.py", "migrate", "-v0"], env=db_env, cwd=REPO, check=True)
    ingest = _timed([str(PYTHON), "manage.py", "ingest", str(big)], db_env)
    shutil.rmtree(var)
    return bare, ingest


def whole_process(big: Path, repeats: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="traj2env-whole-"))
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.pop("TRAJ2ENV_VAR", None)
    cached = dict(env, PYTHONPYCACHEPREFIX=str(work / "pycache"))
    cached.pop("PYTHONDONTWRITEBYTECODE", None)
    setups = [("as this machine runs Python", env), ("warm bytecode cache", cached)]
    _whole_once(big, cached, work)  # fills the cache; not timed
    print(f"\nWhole process, {big.stat().st_size / 1e6:.1f} MB, median of {repeats} runs each\n")
    print(
        "| Python start-up | atif-make wall s | ingest wall s | x | atif-make CPU s "
        "| ingest CPU s | x |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, run_env in setups:
        bare, ingest = [], []
        for _ in range(repeats):
            b, i = _whole_once(big, run_env, work)
            bare.append(b)
            ingest.append(i)
        bw, iw = (statistics.median(w for w, _ in xs) for xs in (bare, ingest))
        bc, ic = (statistics.median(c for _, c in xs) for xs in (bare, ingest))
        print(
            f"| {label} | {bw:.2f} | {iw:.2f} | {iw / bw:.2f} | {bc:.2f} | {ic:.2f} "
            f"| {ic / bc:.2f} |"
        )
    shutil.rmtree(work)


def _sessions(folder: Path, count: int, start: int = 0) -> None:
    from generate_claude_code import SESSION, generate

    text = generate(6)
    for n in range(start, count):
        session = str(uuid.UUID(int=n + 1))
        (folder / f"{session}.jsonl").write_text(text.replace(SESSION, session))


def one_folder(total: int) -> None:
    from atif_make import convert

    from trajectories.models import SourceFile

    print(f"\nOne folder of small Claude Code sessions (up to {total:,})\n")
    print("| sessions in one folder | ingest s | ms per session | CPU ms per session | per s |")
    print("|---:|---:|---:|---:|---:|")
    sizes = sorted({s for s in (1_000, total // 2, total) if 0 < s <= total})
    for size in sizes:
        SourceFile.objects.all().delete()  # and their trajectories: each size starts empty
        folder = Path(tempfile.mkdtemp(prefix="traj2env-sessions-"))
        _sessions(folder, size)
        took, cpu, summary = _ingest_timed([folder])
        assert summary.ingested == size and not summary.failed, summary.failed[:3]
        print(
            f"| {size:,} | {took:.1f} | {took / size * 1000:.2f} | {cpu / size * 1000:.2f} "
            f"| {size / took:,.0f} |"
        )
        if size == sizes[-1]:
            sample = sorted(folder.glob("*.jsonl"))[:3]
            crowded = statistics.median(_convert_ms(convert, p) for p in sample)
            alone_dir = Path(tempfile.mkdtemp(prefix="traj2env-alone-"))
            alone = alone_dir / sample[0].name
            shutil.copy(sample[0], alone)
            solo = statistics.median(_convert_ms(convert, alone) for _ in range(3))
            print(
                f"\natif-make convert of one of these sessions: {solo:.1f} ms alone, "
                f"{crowded:.0f} ms inside the folder of {size:,} (it globs and resolves every "
                f"sibling for each file: {size:,} files that way would take about "
                f"{crowded * size / 1000 / 60:.0f} minutes)"
            )
            shutil.rmtree(alone_dir)
        shutil.rmtree(folder)


def _convert_ms(convert, path: Path) -> float:
    started = time.perf_counter()
    convert(path, "claude-code-transcript")
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--whole", type=int, default=5, help="runs of each side; 0 skips")
    parser.add_argument("--sessions", type=int, default=10_000, help="0 skips")
    args = parser.parse_args()
    var = setup()
    sys.path.insert(0, str(Path(__file__).parent))
    from generate_claude_code import generate

    big = var / "claude-code-long.jsonl"
    big.write_text(generate(args.steps))
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    in_process(big, args.corpus)
    if args.whole:
        whole_process(big, args.whole)
    if args.sessions:
        one_folder(args.sessions)
    print(f"\nload average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
