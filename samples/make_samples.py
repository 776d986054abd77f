"""Write the bundled sample trajectories, deterministically.

    python samples/make_samples.py           # (re)write the samples beside this script
    python samples/make_samples.py --check   # exit 1 if a sample on disk is out of date

The samples and their stories are made by the ``samplegen`` package at the top of the
repository (see its docstring); this script writes them here. ``STORIES`` and ``build`` are
exported for the tests, which load this file by path.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script, only samples/ is on the path
    sys.path.insert(0, str(HERE.parent))

from samplegen import STORIES, build  # noqa: E402

__all__ = ["STORIES", "build", "main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale samples")
    args = parser.parse_args(argv)
    stale = []
    for relative, text in build().items():
        target = HERE / relative
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(relative)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    for relative in stale:
        print(("stale: " if args.check else "wrote: ") + relative)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
