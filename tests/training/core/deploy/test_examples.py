"""The docstrings open with runnable examples; they are run here so they stay true."""

import doctest
import importlib

import pytest

MODULES = ["adapters", "gate", "bucketing", "states", "budget", "route", "serving"]


@pytest.mark.parametrize("name", MODULES)
def test_the_module_docstring_examples_run_as_written(name: str) -> None:
    module = importlib.import_module(f"training.core.deploy.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0
