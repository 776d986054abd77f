"""Labels that mark what traj2env created in a Docker engine, and who created it.

Every container, network and volume we create carries ``traj2env.run=<run id>`` and
``traj2env.owner=<host>:<pid>:<start time>``. Cleanup finds leftovers by the first and uses the
second to leave alone the live containers of another worker on the same engine: removing them
would turn that worker's trials into infrastructure failures.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Mapping

PREFIX = "traj2env."
RUN = "traj2env.run"
OWNER = "traj2env.owner"
KIND = "traj2env.kind"
RECIPE = "traj2env.recipe"

KIND_BASE = "base"
KIND_SANDBOX = "sandbox"

_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def check_value(value: str, *, what: str = "label value") -> str:
    """A value safe to put in a label and a filter: no '=', spaces or commas, at most 128 chars."""
    if not _VALUE.match(value):
        raise ValueError(f"{what} {value!r} must be 1-128 of letters, digits, '_', '.', ':' or '-'")
    return value


def label_filter(label: str) -> str:
    """Check a ``key`` or ``key=value`` filter and return it; only traj2env's own keys pass.

    Cleanup deletes whatever matches, so a filter outside our namespace (or an empty one, which
    Docker reads as "everything") is refused rather than trusted.
    """
    key, sep, value = label.partition("=")
    if not key.startswith(PREFIX) or len(key) == len(PREFIX) or not re.match(r"^[a-z0-9_.]+$", key):
        raise ValueError(f"label filter {label!r} must name a traj2env.* key")
    if sep:
        check_value(value)
    return label


def run_filter(run_id: str | None = None) -> str:
    """The filter for one run's resources, or for every run's when ``run_id`` is None."""
    return RUN if run_id is None else f"{RUN}={check_value(run_id, what='run id')}"


def _start_time(pid: int) -> str | None:
    """The process's start time, '-' when it runs but the time is unknown, None when it is gone."""
    if not os.path.isdir("/proc/self"):  # no procfs (macOS): existence is all we can know
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return "-"
        return "-"
    # Field 22 of /proc/PID/stat (after the parenthesised command name, which may hold spaces):
    # with the pid it identifies a process even after the pid is reused.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def owner_token(pid: int | None = None) -> str:
    """``host:pid:start`` for this process (or ``pid``); start is '-' where /proc is absent."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or '-'}"


def owner_alive(
    token: str,
    *,
    hostname: str | None = None,
    start_time: Callable[[int], str | None] = _start_time,
) -> bool:
    """Whether the process that owns a resource may still be running.

    Unknown means alive: a token from another host, or one we cannot parse, is kept, because
    deleting a live worker's container is worse than leaving a dead one for ``--include-live``.
    """
    host, _, rest = token.partition(":")
    pid_text, _, started = rest.partition(":")
    if host != (hostname or socket.gethostname()) or not pid_text.isdigit():
        return True
    now = start_time(int(pid_text))
    if now is None:
        return False
    return "-" in (started, now) or started == now


def is_orphan(labels: Mapping[str, str], **kwargs) -> bool:
    """A resource whose owner is known to be gone; resources without an owner label are orphans."""
    token = labels.get(OWNER)
    return token is None or not owner_alive(token, **kwargs)
