"""traj2env servers: Redis and PostgreSQL from Debian's packages, running beside a check.

Standard library only (Python 3.8+). The same file is the entrypoint of the ``services`` base
image (copied in at bootstrap, see ``docker/base.py``) and part of every task's grader
(``tests/grader/``), so the agent's container and the verifier start the services one way:

    python3 -I servers.py entrypoint -- CMD...    start $TRAJ2ENV_SERVICES, then exec CMD
    python3 -I servers.py wait redis postgresql   exit 0 once each answers (Harbor's healthcheck)

    import servers                                 # grade.py, as root
    started = servers.start(["redis"])             # fresh instances, ready, or ServiceError
    servers.stop(started)                          # killed, their data removed

Each service runs as its Debian user (``redis``, ``postgres``; when the process starting it is
not root, as that process's own user), listens on loopback only (127.0.0.1, the usual port:
Redis 6379, PostgreSQL 5432) and keeps its data in a fresh throwaway folder. PostgreSQL's data
is a copy of a cluster made at bootstrap (trust authentication; roles and databases
``postgres``, ``agent`` and ``grader``), with its socket in Debian's /var/run/postgresql so
``psql`` finds it as it would on the recorded machine.

Why a submission cannot keep a forged service running into grading: the verifier is a fresh
container of the pristine image, so nothing the agent started exists there; the grader stops
whatever the image's entrypoint started, starts its own instances as root before the check
(the check, running as ``grader``, cannot bind their ports first, nor signal them), and after
the check kills every ``grader`` process (a fake server the check started among them) and
then the services. The check may still talk to them as any client can (even ask Redis to shut
down and serve its tests itself): that is the code under test again, and the tests it serves
are judged with their control copies like any others.
"""

import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HOST = "127.0.0.1"
PG_TEMPLATE = "/var/lib/traj2env/postgresql"  # made at bootstrap (docker/base.py)
PG_SOCKETS = "/var/run/postgresql"  # where Debian's libpq looks by default
DATA_PREFIX = "traj2env-service-"
READY_SECONDS = 60.0


class ServiceError(RuntimeError):
    """A service could not be started (or never answered): an infrastructure failure."""


def _postgres_bin():
    root = "/usr/lib/postgresql"
    versions = sorted(
        (v for v in (os.listdir(root) if os.path.isdir(root) else ()) if v.isdigit()), key=int
    )
    return os.path.join(root, versions[-1], "bin") if versions else None


class Redis:
    name = "redis"
    user = "redis"
    port = 6379

    def program(self):
        return shutil.which("redis-server", path="/usr/bin:/usr/sbin:/usr/local/bin")

    def argv(self, data):
        return [
            self.program(),
            "--bind",
            HOST,
            "--port",
            str(self.port),
            "--dir",
            data,
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            "",
        ]

    def prepare(self, data, uid, gid):
        pass

    def ready(self):
        try:
            with socket.create_connection((HOST, self.port), timeout=2) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(64).startswith(b"+PONG")
        except OSError:
            return False


class Postgres:
    name = "postgresql"
    user = "postgres"
    port = 5432

    def program(self):
        folder = _postgres_bin()
        return os.path.join(folder, "postgres") if folder else None

    def argv(self, data):
        sockets = PG_SOCKETS if os.access(PG_SOCKETS, os.W_OK) else data
        return [
            self.program(),
            "-D",
            os.path.join(data, "pgdata"),
            "-c",
            f"listen_addresses={HOST}",
            "-c",
            f"port={self.port}",
            "-c",
            f"unix_socket_directories={sockets}",
            # A throwaway cluster: durability buys nothing and costs the check time.
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
        ]

    def prepare(self, data, uid, gid):
        if not os.path.isdir(PG_TEMPLATE):
            raise ServiceError(f"postgresql: no cluster template at {PG_TEMPLATE}")
        target = os.path.join(data, "pgdata")
        shutil.copytree(PG_TEMPLATE, target, symlinks=True)
        for folder, dirs, files in os.walk(target):
            for name in dirs + files:
                os.lchown(os.path.join(folder, name), uid, gid)
        os.chown(target, uid, gid)
        os.chmod(target, 0o700)  # PostgreSQL refuses a data folder others can read
        if os.geteuid() == 0:  # /run is a fresh tmpfs-like folder in every container
            os.makedirs(PG_SOCKETS, exist_ok=True)
            os.chown(PG_SOCKETS, uid, gid)
            os.chmod(PG_SOCKETS, 0o2775)

    def ready(self):
        # A startup message: AuthenticationOk ('R') once it accepts connections; an error
        # ('E', "the database system is starting up") before.
        body = b"user\0postgres\0database\0postgres\0\0"
        message = struct.pack("!ii", 8 + len(body), 196608) + body
        try:
            with socket.create_connection((HOST, self.port), timeout=2) as conn:
                conn.sendall(message)
                answer = conn.recv(1)
                conn.sendall(b"X\0\0\0\4")  # Terminate
                return answer == b"R"
        except OSError:
            return False


SERVICES = {"redis": Redis(), "postgresql": Postgres()}


def names_from(text):
    """Service names from ``TRAJ2ENV_SERVICES`` ("redis,postgresql" or "redis postgresql")."""
    return [n for n in text.replace(",", " ").split() if n]


def _known(names):
    unknown = sorted(set(names) - set(SERVICES))
    if unknown:
        raise ServiceError(f"unknown services {unknown}; known: {sorted(SERVICES)}")
    return [SERVICES[n] for n in dict.fromkeys(names)]


def _account(service):
    """(uid, gid) the service runs as: its own user when we are root, else ourselves."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    try:
        entry = pwd.getpwnam(service.user)
    except KeyError:
        raise ServiceError(f"{service.name}: the image has no {service.user} user") from None
    return entry.pw_uid, entry.pw_gid


def _processes_running(program):
    real = os.path.realpath(program)
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == real:
                found.append(int(pid))
        except OSError:
            continue
    return found


def _kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class Started:
    def __init__(self, service, process, data, log):
        self.service = service
        self.process = process
        self.data = data
        self.log = log


def start(names, wait=READY_SECONDS):
    """Fresh instances of ``names``, each answering; ServiceError when one cannot be had.

    Whatever already runs the services' programs (what the image's entrypoint started) is
    killed first: the instances graded against are the ones started here.
    """
    services = _known(names)
    stop_running(n.name for n in services)
    started = []
    try:
        for service in services:
            started.append(_start_one(service))
        deadline = time.monotonic() + wait
        for item in started:
            while not item.service.ready():
                if item.process.poll() is not None or time.monotonic() > deadline:
                    raise ServiceError(
                        f"{item.service.name} did not start: {_tail(item.log)}".rstrip()
                    )
                time.sleep(0.05)
    except BaseException:
        stop(started)
        raise
    return started


def _start_one(service):
    program = service.program()
    if not program or not os.access(program, os.X_OK):
        raise ServiceError(f"{service.name}: the image has no server program for it")
    uid, gid = _account(service)
    data = tempfile.mkdtemp(prefix=DATA_PREFIX + service.name + "-")
    os.chown(data, uid, gid)
    service.prepare(data, uid, gid)
    log_path = os.path.join(data, "server.log")

    def demote():
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)

    with open(log_path, "ab") as log:
        os.chown(log_path, uid, gid)
        process = subprocess.Popen(
            service.argv(data),
            cwd=data,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": data},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=demote,
            start_new_session=True,
        )
    return Started(service, process, data, log_path)


def stop(started):
    """Kill the instances ``start`` returned (every process running their programs, the
    servers' own workers included) and remove their data."""
    stop_running(item.service.name for item in started)
    for item in started:
        try:
            item.process.wait(5)
        except subprocess.TimeoutExpired:
            pass
        shutil.rmtree(item.data, ignore_errors=True)


def stop_running(names):
    """Kill every process running the programs of ``names`` until none is left."""
    programs = [p for p in (SERVICES[n].program() for n in names if n in SERVICES) if p]
    for _ in range(100):
        pids = [pid for program in programs for pid in _processes_running(program)]
        if not pids:
            return
        _kill(pids)
        time.sleep(0.02)


def _tail(path, limit=2000):
    try:
        with open(path, "rb") as handle:
            return handle.read()[-limit:].decode("utf-8", "replace")
    except OSError:
        return ""


def wait_ready(names, wait=READY_SECONDS):
    services = _known(names)
    deadline = time.monotonic() + wait
    for service in services:
        while not service.ready():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
    return True


def entrypoint(argv):
    """Start ``$TRAJ2ENV_SERVICES`` (not waiting for them), then become ``argv``.

    A service that cannot start is reported and the container starts anyway: the check then
    fails the way it would on a machine without it.
    """
    names = names_from(os.environ.get("TRAJ2ENV_SERVICES", ""))
    if names:
        try:
            services = _known(names)
            stop_running(s.name for s in services)
            for service in services:
                _start_one(service)
        except (ServiceError, OSError) as exc:
            sys.stderr.write(f"traj2env services: {exc}\n")
    if not argv:
        argv = ["/bin/bash"]
    os.execvp(argv[0], argv)


def main(args):
    if args[:1] == ["entrypoint"]:
        rest = args[1:]
        entrypoint(rest[1:] if rest[:1] == ["--"] else rest)
        return 0  # not reached
    if args[:1] == ["wait"]:
        return (
            0 if wait_ready(args[1:] or names_from(os.environ.get("TRAJ2ENV_SERVICES", ""))) else 1
        )
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
