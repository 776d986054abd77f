"""Every `>>>` example in the code runs: a module whose docstrings show an example is tested by it.

Modules are found by their source, so a new example is tested without being listed here.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("project", "groundwork", "trajectories", "tasks_review", "training")


def modules_with_examples() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or ">>> " not in path.read_text(encoding="utf-8"):
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_the_examples_are_found():
    assert "training.core.globs" in modules_with_examples()


@pytest.mark.parametrize("name", modules_with_examples())
def test_the_examples_in_the_module_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted, f"{name} shows `>>>` examples but doctest found none to run"
    assert result.failed == 0, f"{result.failed} example(s) in {name} do not hold"
