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


def shown(name: str) -> int:
    """How many `>>>` lines the module's source holds."""
    path = ROOT / Path(*name.split("."))
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    lines = source.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.lstrip().startswith(">>> "))


def test_the_examples_are_found():
    assert "training.core.globs" in modules_with_examples()


@pytest.mark.parametrize("name", modules_with_examples())
def test_the_examples_in_the_module_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    # An example where doctest does not look (a comment, a nested function's docstring, a
    # string constant) would be shown to readers and never run.
    assert result.attempted == shown(name), (
        f"{name} shows {shown(name)} `>>>` examples but doctest ran {result.attempted}"
    )
    assert result.failed == 0, f"{result.failed} example(s) in {name} do not hold"
