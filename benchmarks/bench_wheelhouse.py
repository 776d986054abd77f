"""Date-pinned wheels for a task's Python dependencies: a cold and a warm resolution.

    .venv/bin/python benchmarks/bench_wheelhouse.py

Cold: an empty wheel cache (uv's and pip's own HTTP caches may still hold the files); warm: the
same call again, online and offline (no tool runs; the cached wheels' sha256 is checked again).
Needs PyPI.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tasks_review.core.trials.wheelhouse import build_wheelhouse  # noqa: E402

CASES = {"pytest": ["pytest"], "requests + numpy": ["requests>=2,<3", "numpy<2.3"]}
BEFORE = datetime(2025, 6, 1, tzinfo=UTC)


def timed(requirements: list[str], cache: Path, **options) -> tuple[float, object]:
    started = time.monotonic()
    house = build_wheelhouse(requirements, before=BEFORE, cache_dir=cache, **options)
    return time.monotonic() - started, house


def main() -> None:
    print(f"{'requirements':<18} {'cold s':>7} {'warm ms':>8} {'offline ms':>11}  wheels")
    for name, requirements in CASES.items():
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder)
            cold, house = timed(requirements, cache)
            warm, _ = timed(requirements, cache)
            offline, _ = timed(requirements, cache, offline=True)
            pins = ", ".join(line.split(" ")[0] for line in house.lock.splitlines())
            print(f"{name:<18} {cold:>7.2f} {warm * 1000:>8.1f} {offline * 1000:>11.1f}  {pins}")


if __name__ == "__main__":
    main()
