"""Ingest throughput beside bare atif-make conversion of the same files, measured in one run.

    .venv/bin/python benchmarks/bench_ingest.py [--steps 20000] [--corpus ../shared/corpus]

"Bare" is atif-make's convert + to_dict alone; "ingest" is everything `manage.py ingest` does per
file: read, hash, detect, convert, validate with Harbor, keep side data, and store the raw bytes,
ATIF and one row per step in the database.
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

from _django import REPO, setup


def _bare(files: list[Path]) -> float:
    from atif_make import convert

    started = time.perf_counter()
    for f in files:
        convert(f)[0].to_dict()
    return time.perf_counter() - started


def _ingest(paths: list[Path]):
    from trajectories.services import ingest_run_create, ingest_run_execute

    gc.collect()
    started = time.perf_counter()
    summary = ingest_run_execute(run_id=ingest_run_create(paths=paths).id)
    return time.perf_counter() - started, summary


def _steps(ids: list[int]) -> int:
    from trajectories.models import Trajectory

    return sum(Trajectory.objects.filter(id__in=ids).values_list("steps_count", flat=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    args = parser.parse_args()
    var = setup()
    from generate_claude_code import generate

    rows = []
    big = var / "claude-code-long.jsonl"
    big.write_text(generate(args.steps))
    size = big.stat().st_size
    bare = min(_bare([big]) for _ in range(2))
    took, summary = _ingest([big])
    steps = _steps(summary.trajectory_ids)
    rows.append((f"generated Claude Code, {steps} steps", size, steps, bare, took))

    if args.corpus.is_dir():
        from trajectories.core.formats import detect

        files = sorted(p for p in args.corpus.rglob("*") if p.is_file())
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
        atook, asummary = _ingest([args.corpus])  # everything else in the corpus (pi, ATIF, skips)
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

    print(
        f"{'input':<48} {'MB':>6} {'steps':>7} {'bare s':>7} {'ingest s':>8} "
        f"{'MB/s':>6} {'steps/s':>8} {'x bare':>6}"
    )
    for name, nbytes, steps, bare_s, ingest_s in rows:
        ratio = f"{ingest_s / bare_s:.2f}" if bare_s else "—"
        bare_txt = f"{bare_s:.2f}" if bare_s else "—"
        print(
            f"{name:<48} {nbytes / 1e6:>6.1f} {steps:>7} {bare_txt:>7} {ingest_s:>8.2f} "
            f"{nbytes / 1e6 / ingest_s:>6.1f} {steps / ingest_s:>8.0f} {ratio:>6}"
        )


if __name__ == "__main__":
    main()
