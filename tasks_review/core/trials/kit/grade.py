"""traj2env task grader: ``tests/test.sh`` runs it as root in the separate verifier.

Standard library only (Python 3.8+), started with ``python3 -I`` so nothing in the project
can shadow what it imports. The submitted project is already at its place (Harbor uploads the
agent's project; the trial matrix writes the submission's regular files). Then:

1. **Clean**: symlinks, special files, ``__pycache__`` and installed-dependency folders
   (task images install dependencies outside the project) are removed; so is every guarded
   file (tests, test and runner configuration, start-up hooks) the reference lacks, and every
   file a supported runner would discover as a test (unittest's ``test*.py``, node's
   ``*-test.js``, ``test-*.js`` ...) that is not one of the reference's. A project module that
   would shadow a standard-library or runner module the reference does not have is tampering.
2. **Restore**: every guarded file the reference has takes the reference's exact bytes
   (``grading.json`` carries them base64-encoded), owned by root in folders only root can
   take files out of (sticky), so the check cannot swap them while it runs.
3. **Run** the recorded check as an unprivileged ``grader`` user (created when the image has
   none), through the grader kit: a shim first on PATH sends test runners through instrumented
   ones, which report test by test over a Unix socket this process listens on, and ask it which
   real tests to copy as controls (some verbatim, some with an assertion made false, under
   random names, among the real tests). Nothing secret is in the check's environment, files or
   arguments; no file it can write is read for the verdict. With a time limit; then every
   process of that user is killed.
4. **Judge** with ``judging.py`` (the rules the trial matrix applies in its own process to the
   same session records) and write ``reward.txt``; ``reward.json``, which Harbor would prefer,
   is removed. The sessions and the verdict go to ``<verifier dir>/traj2env/``.

Threat model: the submission is written by someone who has read this kit. Everything running
as ``grader`` is theirs: code imported by the tests can patch anything in its own process (and,
with no Yama ptrace restriction, in other ``grader`` processes). What holds it is that no
grading secret is in its environment, files or arguments, that reports go to a socket only
this root process reads and checks as they arrive, and that the controls are copies of the real
tests, with random names, among them: nothing by name, file or call stack tells a verbatim copy
from one with an assertion made false, so sparing the controls while neutering the rest leaves
a failure or a forged pass. Out of reach: code that reads the runner's own memory (the plan it
was given) or compares each running test's code and values with the originals it memorised,
and a submission that hard-codes the visible tests' answers (no hidden tests here; the
candidate page flags checks with too few asserted inputs).

Usage: python3 -I grade.py GRADING_JSON   (TRAJ2ENV_VERIFIER_DIR overrides /logs/verifier)
"""

import ast
import base64
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # -I leaves the script's own folder off sys.path

import copies  # noqa: E402
import judging  # noqa: E402

KIT_FILES = (
    "shim.py",
    "judging.py",
    "copies.py",
    "traj2env_channel.py",
    "unittest_harness.py",
    "pytest_boot.py",
    "traj2env_pytest_controls.py",
    "node_controls.mjs",
    "node_reporter.cjs",
)
WRAPPED = ("python3", "python", "pytest", "py.test", "node", "nodejs")
GRADER = "grader"
SOCKET = "report.sock"
MAX_LOG = 64 << 10
MAX_LINE = 1 << 20
MAX_MESSAGES = judging.MAX_CASES + 100
NODE_BASELINE_NAMES = 300
# Runner modules a project file could stand in for (the standard library comes from Python).
RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging"})
_MODULE_FILE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\.py|\.pyc|\.pyw|\..*\.so|\.so)$")
_RANDOM = random.SystemRandom()


class Rules:
    """``plan.is_guarded``, the runners' discovery and the project/dependency split, rebuilt
    from grading.json."""

    def __init__(self, data):
        self.test_dirs = frozenset(data["test_dirs"])
        self.test_file = re.compile(data["test_file"])
        self.config_names = frozenset(data["config_names"])
        self.config = re.compile(data["config"])
        self.hook = re.compile(data["hook"])
        self.vcs_dirs = frozenset(data["vcs_dirs"])
        self.dependency_dirs = frozenset(data["dependency_dirs"])
        self.discovered_names = [re.compile(p) for p in data.get("discovered", ())]

    def guarded(self, path):
        parts = path.split("/")
        name = parts[-1]
        return bool(
            self.test_file.match(name)
            or set(parts[:-1]) & self.test_dirs
            or name in self.config_names
            or self.config.match(name)
            or self.hook.search(name)
        )

    def discovered(self, path):
        """A file some supported runner would pick up as a test file."""
        name = path.rsplit("/", 1)[-1]
        return any(p.match(name) for p in self.discovered_names)


def clean(project, rules, reference):
    """Remove what may not take part in grading (see the module docstring); what was removed."""
    removed = []

    def walk(folder, rel):
        with os.scandir(folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            path = rel + "/" + entry.name if rel else entry.name
            if entry.is_symlink():
                os.unlink(entry.path)
                removed.append(path)
            elif entry.is_dir(follow_symlinks=False):
                if not rel and entry.name in rules.vcs_dirs:
                    continue  # the repository the image made; never read by grading
                if entry.name in rules.dependency_dirs:
                    # Task images install dependencies outside the project; these came with
                    # the submission (a fake runner in node_modules/.bin, a stale .pyc).
                    shutil.rmtree(entry.path)
                    removed.append(path + "/")
                    continue
                walk(entry.path, path)
            elif not entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(path)
            elif (rules.guarded(path) or rules.discovered(path)) and path not in reference:
                os.unlink(entry.path)
                removed.append(path)

    walk(project, "")
    return removed


def shadowing(project, folders, reference):
    """Project modules in ``folders`` (on the check's import path) named like a standard-library
    or runner module, which the reference does not have (``reference``: its paths): tampering
    findings."""
    names = set(getattr(sys, "stdlib_module_names", ())) | RUNNER_MODULES
    found = []
    for folder in sorted(folders):
        base = os.path.join(project, folder) if folder != "." else project
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            continue
        for name in entries:
            rel = name if folder == "." else folder + "/" + name
            full = os.path.join(base, name)
            match = _MODULE_FILE.match(name)
            module = match.group(1) if match else None
            if module is None and os.path.isfile(os.path.join(full, "__init__.py")):
                module, rel = name, rel + "/__init__.py"
            if module in names and rel not in reference:
                found.append(f"{rel} shadows the {module!r} module the tests may import")
    return found


def restore(project, reference):
    """Write every reference file, making way for it; the paths that differed."""
    restored = []
    for rel in sorted(reference):
        data = base64.b64decode(reference[rel])
        parts = rel.split("/")
        folder = project
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            if os.path.lexists(folder) and not (
                os.path.isdir(folder) and not os.path.islink(folder)
            ):
                os.unlink(folder)
            if not os.path.lexists(folder):
                os.mkdir(folder, 0o755)
        target = os.path.join(project, rel)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        try:
            with open(target, "rb") as handle:
                same = handle.read() == data
        except OSError:
            same = False
        if not same:
            restored.append(rel)
        if os.path.lexists(target):
            os.unlink(target)
        # Not O_EXCL: fuse-overlayfs can refuse it on a name just unlinked over a lower layer.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(target, 0o644)
    return restored


def protect(project, reference):
    """Reference files root-owned, in root-owned sticky folders anyone may add files to: the
    check cannot rewrite, rename or replace them (say, for a later runner in ``a && b``)."""
    folders = set()
    for rel in reference:
        target = os.path.join(project, rel)
        os.lchown(target, 0, 0)
        folder = os.path.dirname(rel)
        while True:
            folders.add(folder)
            if not folder:
                break
            folder = os.path.dirname(folder)
    for folder in folders:
        path = os.path.join(project, folder) if folder else project
        os.lchown(path, 0, 0)
        os.chmod(path, 0o1777)


def changed_during_check(project, reference):
    """Reference files that are not the reference's bytes any more (a tampering finding)."""
    changed = []
    for rel in sorted(reference):
        try:
            fd = os.open(os.path.join(project, rel), os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                same = handle.read() == base64.b64decode(reference[rel])
        except OSError:
            same = False
        if not same:
            changed.append(f"{rel} was changed during the check")
    return changed


def grader_account():
    """(uid, gid, home) of the grader user, created when the image has none."""
    try:
        entry = pwd.getpwnam(GRADER)
    except KeyError:
        for command in (
            ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", GRADER],
            ["adduser", "-S", "-H", "-s", "/bin/sh", GRADER],
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


def safe_path(project, kit_bin):
    """The verifier's PATH with the kit first and nothing the submission could have written."""
    kept = [kit_bin]
    for folder in os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep):
        if not folder.startswith("/") or folder in kept:
            continue
        real = os.path.realpath(folder)
        if real == project or real.startswith(project.rstrip("/") + "/"):
            continue
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


def kill_all(uid):
    """Kill every process of ``uid`` until none is left (a fork bomb races the first sweep)."""
    for _ in range(100):
        alive = processes_of(uid)
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
        return int(text.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


# -- the report channel ---------------------------------------------------------------------------


class Planner:
    """Which real tests each runner copies as controls, from the reference's facts.

    In the check in the image (no reference facts yet: ``baseline``) every test is copied both
    ways, to learn which copies behave (``judging.baseline_controls``). When grading, a few: a
    verbatim copy of tests that fail on the starting files (so sparing unknown names leaves a
    failure) and falsified copies (so neutering everything shows), each under a random name.
    """

    PASS_COPIES = 3
    FAIL_COPIES = 2

    def __init__(self, config):
        self.project = config["project"].rstrip("/")
        reference = config.get("reference") or {}
        self.sources = {}  # reference test file -> parsed module
        for rel, data in reference.items():
            if rel.endswith(".py"):
                try:
                    self.sources[rel] = ast.parse(base64.b64decode(data))
                except (SyntaxError, ValueError):
                    continue
        controls = config.get("reference_controls")
        self.baseline = controls is None
        controls = controls or {}
        self.copyable = set(controls.get("copyable") or ())
        self.mutable = set(controls.get("mutable") or ())
        self.start_failed = set(config.get("start_failed") or ())

    def name(self):
        return "test_" + "".join(_RANDOM.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(14))

    def _choose(self, ids):
        """(verbatim, falsified) test ids for one session, from the reference's facts."""
        ids = list(dict.fromkeys(ids))
        failing = [i for i in ids if i in self.start_failed]
        verbatim = [i for i in failing if i in self.copyable]
        _RANDOM.shuffle(verbatim)
        verbatim = verbatim[: self.PASS_COPIES - 1]
        rest = [i for i in ids if i in self.copyable and i not in verbatim]
        verbatim += _RANDOM.sample(rest, min(len(rest), self.PASS_COPIES - len(verbatim)))
        falsified = [i for i in failing if i in self.mutable]
        _RANDOM.shuffle(falsified)
        falsified = falsified[: self.FAIL_COPIES]
        rest = [i for i in ids if i in self.mutable and i not in falsified]
        falsified += _RANDOM.sample(rest, min(len(rest), self.FAIL_COPIES - len(falsified)))
        return verbatim, falsified

    def python(self, tests):
        """The plan for a unittest or pytest session, and problems with its inventory."""
        problems = []
        known = {}
        for test in tests[: judging.MAX_CASES]:
            try:
                test_id, path, qualname = str(test["id"]), str(test["file"]), str(test["qualname"])
            except (KeyError, TypeError):
                continue
            rel = os.path.relpath(os.path.realpath(path), os.path.realpath(self.project))
            tree = self.sources.get(rel)
            function = copies.find(tree, qualname) if tree is not None else None
            if function is None:
                if test_id in self.mutable:
                    problems.append(f"{test_id} is not the reference's test (substituted?)")
                continue
            known[test_id] = (os.path.join(self.project, rel), qualname, function)
        plan = []
        if self.baseline:
            for test_id, (_, _, function) in known.items():
                spots = len(copies.assertions(function))
                plan.append({"of": test_id, "fail": False})
                if spots:
                    plan.append({"of": test_id, "fail": True, "at": _RANDOM.randrange(spots)})
        else:
            verbatim, falsified = self._choose(known)
            plan += [{"of": i, "fail": False} for i in verbatim]
            for test_id in falsified:
                spots = len(copies.assertions(known[test_id][2]))
                if spots:
                    plan.append({"of": test_id, "fail": True, "at": _RANDOM.randrange(spots)})
        for entry in plan:
            path, qualname, _ = known[entry["of"]]
            entry.update(name=self.name(), file=path, qualname=qualname)
        _RANDOM.shuffle(plan)
        return plan, problems

    def node_file(self, path):
        """The plan for one node test file's process."""
        if self.baseline:
            return {
                "all": True,
                "pass_names": [self.name() for _ in range(NODE_BASELINE_NAMES)],
                "fail_names": [self.name() for _ in range(NODE_BASELINE_NAMES)],
            }
        # Ids start with the test file's path as node gives it to the test's process.
        ids = [i for i in sorted(self.copyable | self.mutable) if i.startswith(path + " > ")]
        verbatim, falsified = self._choose(ids)
        plan = [{"of": i, "fail": False, "name": self.name()} for i in verbatim]
        plan += [{"of": i, "fail": True, "at": 0, "name": self.name()} for i in falsified]
        _RANDOM.shuffle(plan)
        return {"copies": plan}


class Session:
    def __init__(self, kind, pid, hello):
        self.kind = kind
        self.pid = pid
        self.argv = [str(a) for a in (hello.get("argv") or ())][:50]
        self.cases = []
        self.seen = set()
        self.copies = {}  # name -> {"of": id, "fail": bool}
        self.problems = []
        self.complete = False
        self.closed = False
        self.baseline = False

    def case(self, message):
        if self.complete:
            self.problems.append("it reported after its end (an exit hook?)")
            return
        case_id, outcome = str(message.get("id")), str(message.get("outcome"))
        if case_id in self.seen:
            self.problems.append(f"{case_id} was reported twice")
        self.seen.add(case_id)
        if len(self.cases) < judging.MAX_CASES:
            self.cases.append([case_id, outcome])

    def record(self, children=()):
        copies = dict(self.copies)
        for child in children:
            copies.update(child.copies)
        return {
            "kind": self.kind,
            "pid": self.pid,
            "argv": self.argv,
            "complete": self.complete,
            "problems": self.problems[:20],
            "cases": self.cases,
            "copies": copies,
            "baseline": self.baseline,
        }


class Reports:
    """The grader's end of the report channel: a Unix socket in the root-owned kit folder.

    Every instrumented runner connects itself and says what it is; the peer's pid comes from
    the kernel (SO_PEERCRED), not from the message. Test results are checked as they arrive
    (twice, after the end); whatever else connects only adds sessions that must be sound too.
    """

    def __init__(self, path, planner):
        self.planner = planner
        self.lock = threading.Condition()
        self.sessions = []  # unittest, pytest and node-test sessions
        self.children = []  # node test-file processes: their plans
        self.strays = []
        self.threads = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o666)
        self.listener.listen(64)
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if len(self.threads) >= judging.MAX_SESSIONS * 4:
                conn.close()
                continue
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def close(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        for thread in list(self.threads):
            thread.join(5)

    def _serve(self, conn):
        session = None
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid = struct.unpack("3i", creds)[0]
            reader = conn.makefile("rb")
            hello = _read(reader)
            kind = hello.get("kind") if hello and hello.get("t") == "hello" else None
            if kind == "status":
                _send(conn, {"t": "status", "status": self.status_of(hello)})
            elif kind == "node-file":
                self._node_file(conn, reader, pid, hello)
            elif kind in (judging.UNITTEST, judging.PYTEST, judging.NODE_TEST):
                session = Session(kind, pid, hello)
                with self.lock:
                    if len(self.sessions) < judging.MAX_SESSIONS:
                        self.sessions.append(session)
                self._runner(conn, reader, session)
            else:
                with self.lock:
                    self.strays.append(f"a process connected without saying what it is ({pid})")
        except (OSError, ValueError) as exc:
            if session is not None:
                session.problems.append(f"its report broke off: {type(exc).__name__}")
        finally:
            if session is not None:
                with self.lock:
                    session.closed = True
                    self.lock.notify_all()
            conn.close()

    def _runner(self, conn, reader, session):
        _send(conn, {"t": "ok"})
        for _ in range(MAX_MESSAGES):
            message = _read(reader)
            if message is None:
                return
            kind = message.get("t")
            if kind == "tests" and session.kind in (judging.UNITTEST, judging.PYTEST):
                if session.copies or session.cases:
                    session.problems.append("it asked for a second plan")
                    continue
                plan, problems = self.planner.python(message.get("tests") or [])
                session.problems += problems
                session.baseline = self.planner.baseline
                session.copies = {e["name"]: {"of": e["of"], "fail": e["fail"]} for e in plan}
                _send(conn, {"t": "plan", "copies": plan, "baseline": self.planner.baseline})
            elif kind == "case":
                session.case(message)
            elif kind == "end":
                if session.complete:
                    session.problems.append("it ended twice")
                session.complete = True
            else:
                session.problems.append(f"an unexpected message {str(kind)[:40]!r}")
        session.problems.append("it sent more messages than any real run does")

    def _node_file(self, conn, reader, pid, hello):
        plan = self.planner.node_file(str(hello.get("file") or ""))
        child = Session("node-file", pid, hello)
        child.baseline = self.planner.baseline
        if not self.planner.baseline:
            child.copies = {c["name"]: {"of": c["of"], "fail": c["fail"]} for c in plan["copies"]}
        child.parent = parent_of(pid)
        with self.lock:
            self.children.append(child)
        _send(conn, {"t": "plan", **plan})
        # In the check in the image the test process says which test each name copied.
        kinds = {n: False for n in plan.get("pass_names", ())}
        kinds.update({n: True for n in plan.get("fail_names", ())})
        for _ in range(MAX_MESSAGES):
            message = _read(reader)
            if message is None:
                return
            name = str(message.get("name"))
            if message.get("t") == "copy" and name in kinds and name not in child.copies:
                child.copies[name] = {"of": str(message.get("of")), "fail": kinds[name]}

    def status_of(self, hello):
        """The exit status a node runner would have had without its controls."""
        pid, status = hello.get("pid"), hello.get("status")
        status = status if isinstance(status, int) else 1
        deadline = time.monotonic() + 10
        with self.lock:
            while True:
                found = [s for s in self.sessions if s.pid == pid and s.kind == judging.NODE_TEST]
                if found and all(s.closed for s in found) or time.monotonic() > deadline:
                    break
                self.lock.wait(0.1)
            if len(found) != 1:
                return status or 1
            return judging.runner_status(self._record(found[0]), status)

    def _record(self, session):
        kids = [
            c
            for c in self.children
            if session.kind == judging.NODE_TEST and c.parent == session.pid
        ]
        record = session.record(kids)
        if kids:
            record["baseline"] = any(c.baseline for c in kids)
        return record

    def records(self):
        with self.lock:
            records = [self._record(s) for s in self.sessions]
            parents = {s.pid for s in self.sessions if s.kind == judging.NODE_TEST}
            strays = list(self.strays)
            strays += [
                f"a node test process ({c.pid}) ran outside any instrumented runner"
                for c in self.children
                if c.parent not in parents
            ]
        return records, strays


def _read(reader):
    line = reader.readline(MAX_LINE)
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise ValueError("a message longer than the channel allows")
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message that is not an object")
    return message


def _send(conn, message):
    conn.sendall(json.dumps(message).encode() + b"\n")


# -- running the check ----------------------------------------------------------------------------


def run_check(config, kit, uid, gid, home, log_path):
    env = {
        "PATH": safe_path(os.path.realpath(config["project"]), os.path.join(kit, "bin")),
        "HOME": home,
        "USER": GRADER,
        "LOGNAME": GRADER,
        "LANG": "C.UTF-8",
        "CI": "1",
        "NO_COLOR": "1",
    }

    def demote():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    started = time.monotonic()
    timed_out = False
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["bash", os.path.join(kit, "check.sh")],
            cwd=config["project"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=demote,
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


def write_reward(verifier, reward):
    try:
        os.unlink(os.path.join(verifier, "reward.json"))
    except FileNotFoundError:
        pass
    with open(os.path.join(verifier, "reward.txt"), "w") as handle:
        handle.write(f"{reward:g}\n")


def import_folders(config, reference):
    """Project folders on the check's import path: its root, the check's folder, the test
    files' folders (unittest discovery and pytest put those first)."""
    project = config["project"].rstrip("/")
    workdir = os.path.relpath(config["workdir"], project)
    folders = {".", "." if workdir == os.curdir else workdir}
    folders |= {os.path.dirname(rel) or "." for rel in reference if rel.endswith(".py")}
    return folders


def grade(config, verifier, out):
    project = config["project"]
    if not os.path.isdir(project) or os.path.islink(project):
        return {"reward": 0.0, "reasons": [f"no project at {project}"], "grading": "none"}
    rules = Rules(config["rules"])
    reference = config.get("reference") or {}
    removed = clean(project, rules, reference)
    known = set(reference) | set(config.get("reference_paths") or ())
    findings = shadowing(project, import_folders(config, reference), known)
    restored = restore(project, reference)
    uid, gid, home = grader_account()
    chown_tree(project, uid, gid)
    protect(project, reference)
    kit = install_kit(config, sys.executable)
    scratch = tempfile.mkdtemp(prefix="traj2env-run-")  # root-only: the log lives here
    log_path = os.path.join(scratch, "check.log")
    reports = Reports(os.path.join(kit, SOCKET), Planner(config))
    try:
        exit_code, timed_out, seconds = run_check(config, kit, uid, gid, home, log_path)
        reports.close()
        sessions, strays = reports.records()
        output = tail(log_path)
    finally:
        reports.close()
        shutil.rmtree(kit, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    findings += strays + changed_during_check(project, reference)
    with open(os.path.join(out, "sessions.jsonl"), "w") as handle:
        for session in sessions:
            handle.write(json.dumps(session, sort_keys=True) + "\n")
    baseline = config.get("reference_controls") is None
    verdict = judging.judge_sessions(
        exit_code,
        timed_out,
        seconds,
        sessions,
        config.get("structured") or (),
        reference=config.get("reference_passed") or None,
        findings=findings,
        baseline=baseline,
    )
    return {
        "reward": verdict.reward,
        "reasons": list(verdict.reasons),
        "grading": verdict.grading,
        "passed": verdict.passed,
        "failed": list(verdict.failed),
        "controls": verdict.controls,
        "findings": findings[:20],
        "detail": verdict.detail,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "seconds": round(seconds, 3),
        "baseline": baseline,
        "removed": removed[:50],
        "restored": restored[:50],
        "output": output,
    }


def main():
    verifier = os.environ.get("TRAJ2ENV_VERIFIER_DIR") or "/logs/verifier"
    os.makedirs(verifier, exist_ok=True)
    write_reward(verifier, 0.0)
    out = os.path.join(verifier, "traj2env")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    try:
        with open(sys.argv[1], encoding="utf-8") as handle:
            config = json.load(handle)
        outcome = grade(config, verifier, out)
    except BaseException as exc:  # a grader failure is never a pass
        outcome = {"reward": 0.0, "error": f"{type(exc).__name__}: {exc}"}
        traceback.print_exc()
    output = outcome.pop("output", "")
    with open(os.path.join(out, "verdict.json"), "w") as handle:
        json.dump(outcome, handle, indent=1, sort_keys=True)
    write_reward(verifier, float(outcome["reward"]))
    sys.stdout.write(output)
    print(f"\ngrader: reward {outcome['reward']:g}")
    for reason in outcome.get("reasons") or [outcome.get("error", "")]:
        if reason:
            print(f"grader: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
