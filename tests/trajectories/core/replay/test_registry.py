"""The registry: one handler per program name, found after the wrappers are removed."""

from __future__ import annotations

import pytest

from trajectories.core.replay.effects import HANDLERS, handles, packages
from trajectories.core.replay.programs import NODE_PACKAGE_MANAGERS


def test_a_second_handler_for_a_program_is_refused():
    sed = HANDLERS["sed"]
    with pytest.raises(ValueError, match="sed has two handlers"):
        handles("sed")(lambda sh, call: (call.cwd, None))
    assert HANDLERS["sed"] is sed


def test_the_package_managers_that_run_scripts_are_the_ones_with_the_package_handler():
    handled = {n for n, h in HANDLERS.items() if h is packages.node_package_manager}
    assert handled == NODE_PACKAGE_MANAGERS
