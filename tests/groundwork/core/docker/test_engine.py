"""The Docker layer against a real engine: base image, builds, sandboxes, limits, cleanup.

Skips when no daemon answers. One base image serves the whole module: the first run on a
machine builds it (about a minute and a half), later runs find it in the engine at once.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from groundwork.core.docker import (
    ArchiveTooLarge,
    BaseImageSpec,
    Engine,
    FileEntry,
    InfraError,
    Limits,
    bootstrap,
)
from groundwork.core.docker import docker_labels as lbl
from groundwork.core.docker.hashing import context_hash

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[4]
FAST = Limits(cpus=1.0, memory_bytes=512 << 20, pids=256, timeout=60)


@pytest.fixture(scope="module")
def engine() -> Engine:
    try:
        return Engine.from_env(timeout=30)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="module")
def spec() -> BaseImageSpec:
    from django.conf import settings

    # The application's own cache and recipe, so tests and `images bootstrap` share one image.
    return BaseImageSpec(cache_dir=settings.TRAJ2ENV["CACHE_DIR"])


@pytest.fixture(scope="module")
def base(engine, spec):
    return bootstrap(spec, engine=engine)


def run_id() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


def mine(engine: Engine) -> list[str]:
    """Containers this test process created and has not removed."""
    return [c.id for c in engine.containers(label=f"{lbl.OWNER}={lbl.owner_token()}")]


# -- the base image -------------------------------------------------------------------------------


def test_base_image_has_the_tools_checks_need_for_the_unprivileged_user(engine, base):
    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
        who = box.exec("id -u; id -un; pwd")
        assert who.stdout.split() == ["1000", "agent", "/app"]
        versions = {}
        for tool in ("python3", "node", "npm", "git"):
            result = box.exec([tool, "--version"])
            assert result.exit_code == 0, (tool, result.stderr)
            versions[tool] = (result.stdout + result.stderr).strip()
        assert versions["python3"].startswith("Python 3.11")
        assert re.match(r"v\d+\.", versions["node"])
        assert re.match(r"\d+\.\d+", versions["npm"])
        assert versions["git"].startswith("git version")
        venv = box.exec("python3 -m venv /tmp/v && /tmp/v/bin/python -m pip --version")
        assert venv.exit_code == 0, venv.stderr
        grader = box.exec("id -u", user="grader")
        assert grader.stdout.strip() == "1001"
        certs = box.exec("test -s /etc/ssl/certs/ca-certificates.crt")
        assert certs.exit_code == 0


def test_base_image_is_recorded_with_its_id_labels_and_a_lint_clean_pinned_ref(engine, base, spec):
    from harbor.lint.compose import lint_image

    assert re.fullmatch(r"sha256:[0-9a-f]{64}", base.image_id)
    assert re.search(r"@sha256:[0-9a-f]{64}$", base.pinned_ref)
    assert lint_image(base.pinned_ref, Path("Dockerfile"), field="FROM") == []
    info = engine.image(base.pinned_ref)
    assert info is not None and info.id == base.image_id
    assert info.labels == {lbl.RECIPE: spec.recipe_hash, lbl.KIND: lbl.KIND_BASE}
    assert f"{spec.repository}:{spec.tag}" in info.tags


def test_second_bootstrap_is_a_no_op(engine, base, spec):
    started = time.monotonic()
    again = bootstrap(spec, engine=engine)
    assert time.monotonic() - started < 2
    assert again.source == "engine" and not again.built
    assert (again.image_id, again.pinned_ref) == (base.image_id, base.pinned_ref)


@pytest.mark.slow
def test_after_a_prune_the_base_comes_back_with_the_same_id_and_digest(engine, base, spec):
    tarball = Path(spec.cache_dir) / "base" / f"rootfs-{spec.recipe_hash}.tar"
    if not tarball.exists():
        pytest.skip(f"no cached root filesystem at {tarball} to import from")
    # Its own repository, so the module's base image is never touched; layers are shared.
    other = dataclasses.replace(spec, repository="traj2env/base-prune-test")
    first = bootstrap(other, engine=engine)
    try:
        assert first.source in ("tarball", "registry")  # never mmdebstrap: the tar is cached
        assert first.image_id != base.image_id
        engine.client.images.remove(first.image_id, force=True)  # what a prune does
        assert engine.image(first.pinned_ref) is None
        again = bootstrap(other, engine=engine)
        assert again.source == "registry"
        assert (again.image_id, again.pinned_ref) == (first.image_id, first.pinned_ref)
    finally:
        engine.client.images.remove(first.image_id, force=True)


# -- builds ---------------------------------------------------------------------------------------


def test_a_task_dockerfile_builds_offline_from_the_pinned_reference_and_is_reused(
    engine, base, tmp_path
):
    nonce = uuid.uuid4().hex  # new content: this run really builds
    (tmp_path / "app.py").write_text(f"print('built', 6 * 7, {nonce!r})\n")
    # One instruction: on this engine every instruction costs seconds (see the report).
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base.pinned_ref}\nCOPY --chown=agent:agent app.py /app/app.py\n"
    )
    first = engine.build(tmp_path)
    try:
        assert not first.reused
        second = engine.build(tmp_path)
        assert second.reused and second.image_id == first.image_id
        assert second.seconds < 2
        assert first.tag == f"traj2env/build:{first.context_hash}"
        info = engine.image(first.tag)
        assert info is not None and info.id == first.image_id
        with engine.sandbox(first.image_id, run_id=run_id(), limits=FAST) as box:
            assert box.exec("python3 app.py").stdout == f"built 42 {nonce}\n"
    finally:
        engine.client.images.remove(first.image_id, force=True)


def test_a_failing_build_is_an_infra_error_with_its_log(engine, base, tmp_path):
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base.pinned_ref}\nRUN echo about-to-fail && exit 3\n"
    )
    with pytest.raises(InfraError) as caught:
        engine.build(tmp_path)
    assert "about-to-fail" in caught.value.log
    assert engine.image(f"traj2env/build:{context_hash(tmp_path)}") is None


def test_builds_have_no_network(engine, base, tmp_path):
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base.pinned_ref}\n"
        """RUN python3 -c "import socket; socket.create_connection(('1.1.1.1', 53), 2)"\n"""
    )
    with pytest.raises(InfraError, match="failed") as caught:
        engine.build(tmp_path)
    assert "Network is unreachable" in caught.value.log


# -- sandboxes ------------------------------------------------------------------------------------


def test_exec_reports_exit_code_and_separate_outputs(engine, base):
    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
        result = box.exec("echo out; echo err >&2; exit 3")
        assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
        assert not result.ok and not result.timed_out
        env = box.exec("pwd; echo $FOO; id -u", workdir="/tmp", env={"FOO": "bar"}, user="root")
        assert env.stdout.split() == ["/tmp", "bar", "0"]


def test_a_sandbox_has_no_network(engine, base):
    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
        dial = box.exec(
            ["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 53), 2)"]
        )
        assert dial.exit_code != 0
        assert "Network is unreachable" in dial.stderr
        assert box.exec("ls /sys/class/net").stdout.split() == ["lo"]


def cgroup_value(box, v1: str, v2: str) -> str:
    """A cgroup setting as the container sees it, under cgroup v1 or v2."""
    read = box.exec(f"cat /sys/fs/cgroup/{v1} 2>/dev/null || cat /sys/fs/cgroup/{v2}")
    return read.stdout.strip()


def test_cpu_memory_and_process_limits_apply(engine, base):
    limits = Limits(cpus=0.5, memory_bytes=128 << 20, pids=32, timeout=60)
    with engine.sandbox(base.image_id, run_id=run_id(), limits=limits) as box:
        assert cgroup_value(box, "memory/memory.limit_in_bytes", "memory.max") == str(128 << 20)
        assert cgroup_value(box, "pids/pids.max", "pids.max") == "32"
        quota = cgroup_value(box, "cpu/cpu.cfs_quota_us", "cpu.max").split()[0]
        assert quota == "50000"
        hog = box.exec(["python3", "-c", "b = bytearray(400 << 20); print('survived')"])
        assert hog.exit_code == 137 and "survived" not in hog.stdout  # the OOM killer's SIGKILL
        forks = box.exec(
            [
                "python3",
                "-c",
                (
                    "import subprocess\n"
                    "ps = []\n"
                    "try:\n"
                    "    for _ in range(100): ps.append(subprocess.Popen(['sleep', '30']))\n"
                    "except OSError as e: print('blocked after', len(ps))\n"
                ),
            ]
        )
        blocked = re.search(r"blocked after (\d+)", forks.stdout)
        assert blocked and int(blocked.group(1)) < 32


def test_the_time_limit_kills_the_command_and_reports_it(engine, base):
    before = mine(engine)
    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
        result = box.exec("echo started; sleep 600", timeout=1.5)
        assert result.timed_out and result.exit_code is None and not result.ok
        assert 1.5 <= result.seconds < 10
        assert result.stdout == "started\n"
        assert not box.alive
        with pytest.raises(InfraError, match="stopped"):
            box.exec("true")
    assert mine(engine) == before


def test_long_output_keeps_its_head_and_tail(engine, base):
    limits = Limits(output_bytes=64 << 10, timeout=60)
    with engine.sandbox(base.image_id, run_id=run_id(), limits=limits) as box:
        result = box.exec(
            ["python3", "-c", "import sys; sys.stdout.write('BEGIN' + 'a' * 3_000_000 + 'END')"]
        )
    assert result.exit_code == 0 and result.truncated
    assert result.stdout.startswith("BEGIN") and result.stdout.endswith("END")
    assert len(result.stdout) < 70_000 and "bytes dropped" in result.stdout


def test_files_go_in_owned_by_the_agent_and_come_out_of_the_stopped_container(engine, base):
    files = {"src/app.py": b"print('hi')\n", "run.sh": FileEntry(b"#!/bin/sh\necho ran\n", True)}
    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
        box.put_files("/app/proj/deeper", files)  # missing folders are created
        listing = box.exec(
            "stat -c '%u %a %n' deeper deeper/src deeper/src/app.py deeper/run.sh",
            workdir="/app/proj",
        )
        assert listing.stdout.split("\n")[:4] == [
            "1000 755 deeper",
            "1000 755 deeper/src",
            "1000 644 deeper/src/app.py",
            "1000 755 deeper/run.sh",
        ]
        assert box.exec("./deeper/run.sh", workdir="/app/proj").stdout == "ran\n"
        box.exec("echo new > /app/proj/deeper/made-inside.txt")
        box.stop()
        out = box.copy_out("/app/proj/deeper")
    assert out.files == {
        **{k: v if isinstance(v, FileEntry) else FileEntry(v) for k, v in files.items()},
        "made-inside.txt": FileEntry(b"new\n"),
    }
    assert out.refused == ()


def test_copy_out_refuses_symlinks_pointing_outside_and_special_files(engine, base):
    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
        made = box.exec(
            "mkdir -p /app/proj/tests && cd /app/proj && echo ok > keep.txt && "
            "ln -s /etc/passwd leak && ln -s ../../../etc tests/conf && mkfifo pipe && "
            "ln keep.txt hard.txt"
        )
        assert made.exit_code == 0, made.stderr
        out = box.copy_out("/app/proj")
    assert out.files == {"keep.txt": FileEntry(b"ok\n"), "hard.txt": FileEntry(b"ok\n")}
    refused = {r.path: r.reason for r in out.refused}
    assert set(refused) == {"leak", "tests/conf", "pipe"}
    assert "/etc/passwd" in refused["leak"]
    assert all(b"root:" not in entry.data for entry in out.files.values())


def test_copy_out_enforces_its_size_limit_and_reports_missing_paths(engine, base):
    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
        box.exec("head -c 2000000 /dev/zero > /app/big.bin")
        with pytest.raises(ArchiveTooLarge):
            box.copy_out("/app", max_bytes=1 << 20)
        assert set(box.copy_out("/app", max_bytes=4 << 20).files) == {"big.bin"}
        with pytest.raises(FileNotFoundError):
            box.copy_out("/app/nothing-here")


# -- no leaks -------------------------------------------------------------------------------------


def test_no_container_is_left_after_an_exception_in_the_block(engine, base):
    before = mine(engine)
    with pytest.raises(RuntimeError, match="checker crashed"):
        with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
            box.exec("true")
            assert len(mine(engine)) == len(before) + 1
            raise RuntimeError("checker crashed")
    assert mine(engine) == before


def test_no_container_is_left_after_keyboard_interrupt_mid_exec(engine, base):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach only the main thread")
    before = mine(engine)

    def interrupt(_signum, _frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as box:
                signal.setitimer(signal.ITIMER_REAL, 1.0)
                box.exec("sleep 30")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert mine(engine) == before


CHILD = """
import sys
from groundwork.core.docker import Engine, Limits
engine = Engine.from_env()
with engine.sandbox(sys.argv[1], run_id=sys.argv[2], limits=Limits(timeout=600)) as box:
    print(box.id, flush=True)
    box.exec("sleep 600")
"""


def test_cleanup_removes_what_a_killed_run_left_and_spares_live_runs(engine, base):
    killed_run = run_id()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, base.image_id, killed_run],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        container_id = child.stdout.readline().strip()
        assert container_id, "the child process did not start a sandbox"
        time.sleep(0.5)  # inside exec now
    finally:
        child.kill()  # SIGKILL: no finally block of the child runs
        child.wait()
    left = engine.containers(label=lbl.run_filter(killed_run))
    assert [c.id for c in left] == [container_id]
    dead_owner = left[0].labels[lbl.OWNER]
    leftovers = {lbl.RUN: killed_run, lbl.OWNER: dead_owner}
    network = engine.client.networks.create(f"traj2env-{killed_run}", labels=leftovers)
    volume = engine.client.volumes.create(f"traj2env-{killed_run}", labels=leftovers)

    with engine.sandbox(base.image_id, run_id=run_id(), limits=FAST) as live:
        report = engine.cleanup()
        assert container_id not in {c.id for c in engine.containers()}
        assert live.exec("true").ok  # this process's live sandbox was kept
        assert any(name.startswith("traj2env-test-") for name in report.kept_live)
    assert network.name in report.networks and volume.name in report.volumes
    assert engine.containers(label=lbl.run_filter(killed_run)) == []
