"""scripts/up.sh's serving part (``serve_all`` in scripts/lib.sh): the web app and both worker
clusters, with gunicorn's control socket under var/, all stopped within seconds of a signal."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid

import pytest

from tests.conftest import REPO, subprocess_env
from tests.processes import marked_pids, wait_until

MARK = "TRAJ2ENV_TEST_MARK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def cmdlines(pids: set[int]) -> list[str]:
    lines = []
    for pid in pids:
        try:
            lines.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode())
        except OSError:
            pass
    return lines


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("setsid"), reason="needs util-linux's setsid")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_web_app_and_both_worker_clusters_within_seconds(tmp_path, sig):
    mark = uuid.uuid4().hex
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in subprocess_env().items()
        if not k.startswith(("Q_", "DATABASE_URL", "DEBUG", "XDG_RUNTIME_DIR"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="project.settings",
        TRAJ2ENV_VAR=str(tmp_path),
        SECRET_KEY="serve-test",
        HOME=str(home),
        TRAJ2ENV_WEB_WORKERS="1",
        TRAJ2ENV_STOP_GRACE="10",
        **{MARK: mark},
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen(
            ["bash", "-c", 'source scripts/lib.sh && serve_all "$0"', f"127.0.0.1:{port}"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:

        def up() -> bool:
            clusters = [c for c in cmdlines(marked_pids(MARK, mark)) if "qcluster" in c]
            # each cluster: its main process, sentinel, monitor, pusher and workers
            return answers(port) and len(clusters) >= 8

        assert wait_until(up, 90), log.read_text(errors="replace")
        time.sleep(2)  # the clusters' workers settle, as they have when a person presses Ctrl-C
        assert (tmp_path / "gunicorn.ctl").is_socket()
        assert not (home / ".gunicorn").exists()

        started = time.monotonic()
        serve.send_signal(sig)
        serve.wait(25)
        assert wait_until(lambda: not marked_pids(MARK, mark), 20 - (time.monotonic() - started))
        assert time.monotonic() - started < 20
        said = log.read_text(errors="replace")
        assert "stopping the web app and the workers" in said and "stopped" in said
        assert serve.returncode == 128 + sig
    finally:
        for pid in marked_pids(MARK, mark):
            os.kill(pid, signal.SIGKILL)
