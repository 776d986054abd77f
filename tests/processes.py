"""Processes the tests start and must not leave behind: found in /proc, stopped with a grace.

A ``manage.py qcluster`` can hang for good in its own signal handler (django-q2 issue #346:
the main process waits on a futex after SIGTERM or SIGINT), so every stop here escalates, as
``scripts/lib.sh`` does for up.sh: the signal to the whole process group, then SIGKILL to
whatever is left after the grace period.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

GRACE_SECONDS = 10.0


def _live() -> dict[int, tuple[str, int]]:
    """Every live process: its state and process group. A zombie counts as gone (it lingers
    only until its parent, or init, reaps it)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it just ended
        # After the parenthesised name: state, parent, process group.
        state, _parent, group = stat.rpartition(")")[2].split()[:3]
        if state not in ("Z", "X"):
            found[int(entry.name)] = (state, int(group))
    return found


def group_pids(group: int) -> set[int]:
    """The live processes of a process group."""
    return {pid for pid, (_state, g) in _live().items() if g == group}


def marked_pids(name: str, value: str) -> set[int]:
    """The live processes whose environment holds ``name=value``: everything a test's program
    started, even after its parent has gone and init adopted it."""
    wanted = f"{name}={value}".encode()
    found = set()
    for pid in _live():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.add(pid)
    return found


def wait_until(condition: Callable[[], object], timeout: float, every: float = 0.2) -> bool:
    """Whether ``condition`` became true within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def stop_group(
    process: subprocess.Popen[bytes],
    *,
    sig: signal.Signals = signal.SIGINT,
    grace: float = GRACE_SECONDS,
) -> bool:
    """Stop a program started with ``start_new_session=True`` and everything it forked: ``sig``
    to its process group, SIGKILL to the group after ``grace`` seconds. Whether it had to be
    killed."""
    group = process.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, sig)
    ended = wait_until(lambda: process.poll() is not None and not group_pids(group), grace)
    if not ended:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    process.wait(30)
    wait_until(lambda: not group_pids(group), 30)
    return not ended
