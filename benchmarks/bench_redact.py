"""The redactor's speed on trajectory text: whole files, one string at a time, and parsed JSON.

    .venv/bin/python benchmarks/bench_redact.py [--corpus ../shared/corpus] [--mb 4]

Reads the corpus's largest session logs (or, without the corpus, generated ATIF-like lines of
the same mix), then reports MB/s for ``redact`` over the text in one piece, over its lines one
by one (what a page does per step) and ``redact_data`` over the parsed lines (what an export
does), with the replacements it made.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from trajectories.core.redact import merge_counts, redact, redact_data  # noqa: E402


def corpus_text(corpus: Path, limit: int) -> str:
    files = sorted(
        (p for p in corpus.rglob("*") if p.suffix in {".jsonl", ".json"} and p.is_file()),
        key=lambda p: p.stat().st_size,
        reverse=True,
    )
    parts: list[str] = []
    size = 0
    for path in files:
        if size >= limit:
            break
        text = path.read_text(errors="replace")
        parts.append(text)
        size += len(text)
    return "\n".join(parts)


def generated_text(limit: int) -> str:
    from tests.trajectories.core.redact.planted import realistic_trajectory_text

    return realistic_trajectory_text(limit)


def rate(label: str, size: int, seconds: float, counts: dict[str, int]) -> None:
    print(f"{label:<34} {size / 1e6:>7.2f} MB {seconds:>7.2f} s {size / 1e6 / seconds:>7.1f} MB/s")
    print(f"{'':<34} replacements: {counts or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--mb", type=float, default=4.0)
    args = parser.parse_args()
    limit = int(args.mb * 1e6)
    source = "corpus" if args.corpus.is_dir() else "generated"
    text = corpus_text(args.corpus, limit) if source == "corpus" else generated_text(limit)
    print(f"input: {source}, {len(text) / 1e6:.2f} MB\n")

    started = time.perf_counter()
    whole = redact(text)
    rate("redact(text), one piece", len(text), time.perf_counter() - started, whole.counts)

    lines = text.splitlines()
    started = time.perf_counter()
    per_line = merge_counts(redact(line).counts for line in lines)
    rate(f"redact(line) x {len(lines)}", len(text), time.perf_counter() - started, per_line)

    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            parsed.append(line)
    started = time.perf_counter()
    data = redact_data(parsed)
    rate("redact_data(parsed lines)", len(text), time.perf_counter() - started, data.counts)


if __name__ == "__main__":
    main()
