"""Containers: managing images and containers leaves the project alone, running one may not."""

from __future__ import annotations

import pytest

from .helpers import after, presumed_under

KNOWN = {"a.py": "a\n"}


@pytest.mark.parametrize(
    "command", ["docker ps", "docker build -t app .", "docker cp a.py app:/a.py", "podman images"]
)
def test_docker_commands_that_do_not_run_a_container_change_nothing(command):
    assert after(command, files=KNOWN) == KNOWN


@pytest.mark.parametrize(
    "command", ["docker run -v $PWD:/w app make", "docker cp app:/a.py a.py", "podman compose up"]
)
def test_running_a_container_or_copying_out_of_one_makes_the_directory_uncertain(command):
    assert after(command, files=KNOWN) == presumed_under(KNOWN)
