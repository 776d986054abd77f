"""Container labels: our namespace, run filters, and who owns a container."""

from __future__ import annotations

import subprocess
import sys

import pytest

from groundwork.core.docker import docker_labels as lbl

# -- labels -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "traj2env.",
        "com.docker.compose.project",
        "traj2env.run=a b",
        "traj2env.run=a,b",
        "TRAJ2ENV.run",
        "traj2env.run=" + "x" * 200,
    ],
)
def test_cleanup_filters_outside_our_namespace_are_refused(bad):
    with pytest.raises(ValueError):
        lbl.label_filter(bad)


def test_run_filters():
    assert lbl.label_filter(lbl.run_filter()) == "traj2env.run"
    assert lbl.run_filter("trial-42:oracle.1") == "traj2env.run=trial-42:oracle.1"
    with pytest.raises(ValueError):
        lbl.run_filter("42; rm -rf /")


def test_this_process_owns_live_resources():
    assert lbl.owner_alive(lbl.owner_token())
    assert not lbl.is_orphan({lbl.OWNER: lbl.owner_token()})


def test_a_finished_process_leaves_orphans():
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    token = f"{lbl.owner_token().split(':')[0]}:{child.stdout.strip()}:12345"
    assert not lbl.owner_alive(token)
    assert lbl.is_orphan({lbl.OWNER: token})


def test_a_reused_pid_is_not_mistaken_for_the_owner():
    host, pid, _start = lbl.owner_token().split(":")
    assert not lbl.owner_alive(f"{host}:{pid}:1")  # our pid, but a process started at another time


def test_unknown_owners_are_kept_and_unowned_resources_are_orphans():
    assert lbl.owner_alive("some-other-host:1:1")
    assert lbl.owner_alive("garbage")
    assert lbl.is_orphan({lbl.RUN: "x"})
