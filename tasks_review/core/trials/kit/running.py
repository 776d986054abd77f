"""Step 3 of grading (``grade.py``): the recorded check, run as the unprivileged ``grader``.

The grader user is created when the image has none; the runner kit (the shim and the
instrumented runners) is installed in a fresh root-owned folder first on a PATH of folders only
root can write (nothing the submission or, in same-container grading, the agent wrote); the
check runs with a time limit, and then every process of that user is killed. In same-container
grading every process the grader did not start is killed before anything else
(``kill_strangers``). Standard library only (Python 3.8+).
"""

import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TASK_GRADER = "/tests/grader"  # where Harbor uploads a task's tests/grader/
HARBOR_VERIFIER = "/logs/verifier"
# What the check's processes load from the kit folder (the grader's own modules stay here).
KIT_FILES = (
    "shim.py",
    "judging.py",
    "copies.py",
    "traj2env_channel.py",
    "unittest_harness.py",
    "pytest_boot.py",
    "traj2env_pytest_controls.py",
    "node_controls.mjs",
    "node_tests.cjs",
    "node_reporter.cjs",
    "go_harness.py",
)
WRAPPED = ("python3", "python", "pytest", "py.test", "node", "nodejs", "go")
# Go offline (the Go base image's config sets the same for the agent, docker/base.py GO_ENV):
# modules come from the project or not at all, no toolchain is downloaded.
GO_ENV = {"GOPROXY": "off", "GOTOOLCHAIN": "local"}
GRADER = "grader"
SHELL = "/bin/bash"  # the check's shell, by absolute path: the check's PATH is no root's
MAX_LOG = 64 << 10


def grader_account():
    """(uid, gid, home) of the grader user, created when the image has none."""
    try:
        entry = pwd.getpwnam(GRADER)
    except KeyError:
        # By absolute path, as everything root runs here (nothing is looked up on PATH).
        for command in (
            ["/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/bin/sh", GRADER],
            ["/usr/sbin/adduser", "-S", "-H", "-s", "/bin/sh", GRADER],
            ["/sbin/adduser", "-S", "-H", "-s", "/bin/sh", GRADER],
        ):
            try:
                subprocess.run(command, check=True, capture_output=True)
                break
            except (OSError, subprocess.CalledProcessError):
                continue
        try:
            entry = pwd.getpwnam(GRADER)
        except KeyError:
            entry = pwd.getpwnam("nobody")
    if entry.pw_uid == 0:
        raise SystemExit("grade.py: the grader account must not be root")
    home = entry.pw_dir
    if not os.path.isdir(home) or os.stat(home).st_uid != entry.pw_uid:
        home = tempfile.mkdtemp(prefix="traj2env-home-")
        os.chown(home, entry.pw_uid, entry.pw_gid)
    return entry.pw_uid, entry.pw_gid, home


def chown_tree(root, uid, gid):
    os.lchown(root, uid, gid)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), uid, gid)


def install_kit(config, python):
    """The kit in a fresh root-owned folder: the shim, its wrappers and the check script."""
    kit = tempfile.mkdtemp(prefix="traj2env-grader-")
    os.chmod(kit, 0o755)
    for name in KIT_FILES:
        shutil.copyfile(os.path.join(HERE, name), os.path.join(kit, name))
        os.chmod(os.path.join(kit, name), 0o644)
    bin_dir = os.path.join(kit, "bin")
    os.mkdir(bin_dir, 0o755)
    os.symlink(python, os.path.join(kit, "python"))
    for tool in WRAPPED:
        with open(os.path.join(bin_dir, tool), "w") as handle:
            handle.write(f'#!/bin/sh\nexec {kit}/python -I {kit}/shim.py {tool} "$@"\n')
        os.chmod(os.path.join(bin_dir, tool), 0o755)
    # python3.11 and friends resolve to the same wrapper as python3.
    for folder in ("/usr/local/bin", "/usr/bin"):
        for name in os.listdir(folder) if os.path.isdir(folder) else ():
            if re.match(r"^python3\.\d+$", name) and not os.path.exists(
                os.path.join(bin_dir, name)
            ):
                os.symlink("python3", os.path.join(bin_dir, name))
    check = f"cd {quote(config['workdir'])} || exit 97\n{config['command']}\n"
    with open(os.path.join(kit, "check.sh"), "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(check)
    os.chmod(os.path.join(kit, "check.sh"), 0o644)
    return kit


def quote(text):
    return "'" + text.replace("'", "'\"'\"'") + "'"


def root_only(folder):
    """Whether only root can change what ``folder`` holds: it and every folder above it are
    root's and writable by no one else (a sticky folder such as /tmp is fine above a folder of
    root's: no one else can replace that folder in it)."""
    path = os.path.realpath(folder)
    first = True
    while True:
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if info.st_uid != 0 or not stat.S_ISDIR(info.st_mode):
            return False
        if info.st_mode & 0o022 and (first or not info.st_mode & stat.S_ISVTX):
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)
        first = False


def safe_path(project, kit_bin):
    """The verifier's PATH with the kit first and only folders no one but root can write:
    nothing the submission wrote, and in same-container grading nothing the agent wrote."""
    kept = [kit_bin]
    # test.sh starts the grader with a fixed PATH and passes the image's as data.
    given = os.environ.get("TRAJ2ENV_CHECK_PATH") or os.environ.get("PATH")
    for folder in (given or "/usr/local/bin:/usr/bin:/bin").split(os.pathsep):
        if not folder.startswith("/") or folder in kept:
            continue
        real = os.path.realpath(folder)
        if real == project or real.startswith(project.rstrip("/") + "/"):
            continue
        if root_only(real):
            kept.append(folder)
    return os.pathsep.join(kept)


def processes_of(uid):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as handle:
                for line in handle:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(int(name))
                        break
        except (OSError, ValueError):
            continue
    return found


def process_table():
    """{pid: parent pid} of every live process (zombies are already dead)."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X"):
            table[int(name)] = int(fields[1])
    return table


# What a container may run as its PID 1 in front of its command (Docker's --init is tini).
INITS = frozenset({"docker-init", "tini", "dumb-init", "catatonit"})


def strangers(me, parents, init=""):
    """The processes of ``parents`` ({pid: ppid}) that are not ``me``, one of my ancestors or
    descendants, or the container's init and the command it keeps (``init``: PID 1's name;
    under an init, the command is its first child: pids count up in a container's namespace,
    and every later child of PID 1 was orphaned there)."""
    mine = {me}
    if init in INITS:
        mine |= set(sorted(pid for pid, parent in parents.items() if parent == 1)[:1])
    pid = me
    while parents.get(pid, 0) > 0:
        pid = parents[pid]
        mine.add(pid)
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine and parent != 1:
                mine.add(pid)
                grew = True
    return sorted(pid for pid in parents if pid not in mine and pid != 1)


def kill_strangers():
    """Same-container grading: kill every process the grader did not start (the agent's
    daemons, and whatever they forked meanwhile) before anything is read or run."""
    try:
        with open("/proc/1/comm") as handle:
            init = handle.read().strip()
    except OSError:
        init = ""
    _kill_until_gone(lambda: strangers(os.getpid(), process_table(), init))


def in_a_task_container():
    """Only where Harbor or the trial matrix runs a task's grader: as root, from the task's
    tests/ uploaded to /tests, writing to the verifier folder Harbor mounts. Never on a
    machine of its own, where "every other process" is everyone's."""
    return (
        os.geteuid() == 0
        and (os.environ.get("TRAJ2ENV_VERIFIER_DIR") or HARBOR_VERIFIER) == HARBOR_VERIFIER
        and HERE == TASK_GRADER
        and os.path.isdir(HARBOR_VERIFIER)
    )


def kill_all(uid):
    """Kill every process of ``uid`` until none is left."""
    _kill_until_gone(lambda: processes_of(uid))


def _kill_until_gone(find):
    # Sweep after sweep: a fork bomb races the first one.
    for _ in range(100):
        alive = find()
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def go_flags(config):
    """``GOFLAGS=-mod=vendor`` when the check's module vendors its dependencies (the only way
    a module with dependencies builds offline); nothing otherwise."""
    project = os.path.realpath(config["project"])
    folder = os.path.realpath(config["workdir"])
    while folder == project or folder.startswith(project + "/"):
        if os.path.isfile(os.path.join(folder, "go.mod")):
            vendored = os.path.isfile(os.path.join(folder, "vendor", "modules.txt"))
            return {"GOFLAGS": "-mod=vendor"} if vendored else {}
        folder = os.path.dirname(folder)
    return {}


def demoted(uid, gid):
    """What a child runs before its program: ``uid`` and ``gid`` and no other group."""

    def demote():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    return demote


def run_check(config, kit, uid, gid, home, log_path):
    env = {
        "PATH": safe_path(os.path.realpath(config["project"]), os.path.join(kit, "bin")),
        "HOME": home,
        "USER": GRADER,
        "LOGNAME": GRADER,
        "LANG": "C.UTF-8",
        "CI": "1",
        "NO_COLOR": "1",
        **GO_ENV,
        **go_flags(config),
    }

    started = time.monotonic()
    timed_out = False
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [SHELL if os.path.exists(SHELL) else "/bin/sh", os.path.join(kit, "check.sh")],
            cwd=config["project"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=demoted(uid, gid),
            start_new_session=True,
        )
        try:
            status = process.wait(timeout=float(config["timeout"]))
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            status = process.wait()
    seconds = time.monotonic() - started
    kill_all(uid)
    exit_code = status if status >= 0 else 128 - status
    return exit_code, timed_out, seconds


def tail(path, limit=MAX_LOG):
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - limit))
        text = handle.read().decode("utf-8", "replace")
    return ("[... output cut ...]\n" if size > limit else "") + text
