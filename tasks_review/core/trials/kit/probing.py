"""Equivalence probes at grading time: the submission's functions on hidden inputs, judged by root.

Standard library only (Python 3.8+); ``grade.py`` uses it in the verifier and the host imports
``check`` to judge the same outcomes again (``trials.probeset``).

``tests/probes.json`` (written when the task was kept, see ``trials/probes.py``) holds inputs
drawn around the tests' own calls into the project, with the reference's outcome on each; the
*discriminating* ones are those where the reference and the starting code disagree.
``grading.json`` says how many probes the task has and the file's sha256 (``load``): a missing
or changed file is a finding (reward 0), never a check-only task. The file is root's alone:
``lock`` makes it and its folder unreadable to anyone else before anything of the submission
runs, and it never reaches the project, the graded process's environment or its arguments.

After the recorded check, ``run`` starts a fresh process (``probe_runner.py`` or
``probe_runner.cjs`` from a root-owned folder of its own) as ``PROBE_UID``, an identity of its
own that owns nothing: it can read the project (``expose``) but write nothing in it. It imports
the submission's modules, reads the inputs on stdin and prints what the code returned or
raised. Afterwards every process of that uid is killed and everything it created wherever it
could write is removed (``sweep``), so the inputs it saw are not left for anyone to read.
``check`` compares in this process. The submission can make that process print anything; it
cannot learn the expected outcomes, so only code that computes them scores.
"""

import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time

try:
    import probe_runner_go
    import probe_values
    import running
except ImportError:  # imported on the host as part of the package (trials.probeset)
    from . import probe_runner_go, probe_values, running  # type: ignore[no-redef]

PROBES = "probes.json"
FORMAT = 2  # probes.json's "version": exact test ids ("tests"), every probe checked
RUNNER = {"python": "probe_runner.py", "node": "probe_runner.cjs", "go": "probe_runner_go.py"}
# What each runner reads beside it (Go's writes its test from the template).
RUNNER_FILES = {
    "python": ("probe_values.py",),
    "node": ("probe_values.cjs",),
    "go": (probe_runner_go.TEMPLATE, "running.py"),
}
MAX_OUTPUT = 16 << 20
MAX_SECONDS = 300.0  # the calls' share of a run's time limit
MAX_BUILD_SECONDS = 600.0  # Go's builds' share
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
# The probe process's uid and gid: no account, no file, no group of anyone's. The keep-time
# runs use the same (trials/probes.py), so the reference's outcomes were made as it.
PROBE_UID = 64991
HERE = os.path.dirname(os.path.abspath(__file__))
# Not walked by the sweep: kernel views. /dev is walked (its shm and mqueue are writable).
_SKIP = frozenset({"/proc", "/sys"})
# Where anyone may write in most images; the task's own list (probes.json's "writable", found
# in its pristine image when it was kept) adds the rest.
WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock")
_VIRTUAL = frozenset(
    "proc sysfs cgroup cgroup2 devpts securityfs debugfs tracefs pstore bpf configfs fusectl "
    "binfmt_misc autofs hugetlbfs".split()
)


def lock(folder):
    """Make the probes root's alone (call first thing, before any submission code runs): the
    folder and the file owned by root (an upload that kept the host's uid left them someone
    else's) and readable by no one else."""
    path = os.path.join(folder, PROBES)
    if os.path.lexists(path) and not os.path.islink(path):
        if os.geteuid() == 0:
            os.chown(path, 0, 0)
        os.chmod(path, 0o600)
    if os.geteuid() == 0:
        os.chown(folder, 0, 0)
    os.chmod(folder, 0o700)


def record(data):
    """What grading.json says of a probes.json whose bytes are ``data`` (None: no file)."""
    if data is None:
        return {"count": 0}
    probes = json.loads(data.decode("utf-8"))
    return {"count": len(probes["probes"]), "sha256": hashlib.sha256(data).hexdigest()}


def load(folder, recorded):
    """(the probe set beside grading.json or None for a check-only task, a problem or None).

    ``recorded`` is grading.json's ``probes`` entry: the file must be there exactly when it
    says so, with the bytes whose sha256 it gives. Anything else (the file dropped by an upload,
    a copy or an attacker, another file in its place) is a problem: scored 0, never graded as
    though the task were check-only."""
    path = os.path.join(folder, PROBES)
    if not isinstance(recorded, dict) or not isinstance(recorded.get("count"), int):
        return None, "grading.json does not say how many hidden probes the task has"
    present = os.path.lexists(path)
    if recorded["count"] == 0:
        return None, ("a probes.json the task was not kept with" if present else None)
    if not present:
        return None, "the task's hidden probes (tests/probes.json) are missing"
    if os.path.islink(path) or not os.path.isfile(path):
        return None, "the task's hidden probes (tests/probes.json) are not a regular file"
    with open(path, "rb") as handle:
        data = handle.read()
    if hashlib.sha256(data).hexdigest() != recorded.get("sha256"):
        return None, "tests/probes.json is not the one the task was kept with"
    probes = json.loads(data.decode("utf-8"))
    if not isinstance(probes, dict) or len(probes.get("probes") or ()) != recorded["count"]:
        return None, "tests/probes.json does not hold the probes the task was kept with"
    return probes, None


def request(probes, project):
    """What the runner reads on stdin: the inputs, never the expected outcomes."""
    return {
        "language": probes.get("language") or "python",
        "project": project,
        "workdir": os.path.join(project, probes.get("workdir") or "."),
        "paths": list(probes.get("paths") or ["."]),
        "timeout": float(probes.get("call_timeout") or 2.0),
        "calls": [
            {
                "id": p["id"],
                "module": p["module"],
                "function": p["function"],
                "args": p.get("args") or [],
                "kwargs": p.get("kwargs") or {},
            }
            for p in probes["probes"]
        ],
    }


def time_limit(asked):
    """Seconds the runner may take on ``asked`` (what ``request`` gives): a share per call and,
    for Go, a build per package."""
    calls = asked.get("calls") or ()
    limit = min(10.0 + float(asked.get("timeout") or 2.0) * len(calls), MAX_SECONDS)
    if asked.get("language") == "go":
        packages = len({str(c.get("module")) for c in calls})
        limit += min(probe_runner_go.BUILD_SECONDS * packages, MAX_BUILD_SECONDS)
    return limit


def _program(language, runner, search):
    if language == "node":
        node = shutil.which("node", path=search)
        return [node, runner] if node else None
    python = shutil.which("python3", path=search)
    return [python, "-I", runner] if python else None


def expose(project):
    """The project readable by the probe identity and writable by no one else: what it writes
    can only land in folders anyone may write (``sweep`` removes it there)."""
    for folder, dirs, files in os.walk(project):
        for path in [folder] + [os.path.join(folder, name) for name in dirs + files]:
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            mode = stat.S_IMODE(info.st_mode) & ~0o002 | 0o004
            if stat.S_ISDIR(info.st_mode) or info.st_mode & 0o100:
                mode |= 0o001
            if mode != stat.S_IMODE(info.st_mode):
                os.chmod(path, mode)


def sweep(uid, since, top="/"):
    """Remove everything ``uid`` created since ``since`` (its files, folders, FIFOs and sockets
    wherever it could write: a world-writable folder such as /tmp or /dev/shm, or a folder of
    its own); the paths removed. Only folders ``uid`` could write are listed entry by entry."""
    removed = []
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            info = os.lstat(folder)
            entries = list(os.scandir(folder))
        except OSError:
            continue
        writable = info.st_uid == uid or info.st_mode & 0o002
        for entry in entries:
            if entry.path in _SKIP:
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                mine = writable and _created_by(entry.stat(follow_symlinks=False), uid, since)
            except OSError:
                continue
            if mine:
                removed.append(entry.path)
                if is_dir:
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
            elif is_dir:
                stack.append(entry.path)
    return removed


def sweep_roots(listed, project, mounts="/proc/self/mounts"):
    """The folders the sweep walks: every place the probe identity could have written. Those
    anyone may write (``WRITABLE``), those the image gives a user other than root (``listed``,
    found when the task was kept: in same-container grading, the only places a non-root agent
    could have prepared a world-writable folder in), every home, every mounted file system
    but the root (Harbor's /logs among them) and the project; none inside another."""
    roots = set(WRITABLE) | {str(p) for p in listed or ()} | {project}
    try:
        import pwd

        for entry in pwd.getpwall():  # a home its (non-root) user owns: anything may be in it
            try:
                if entry.pw_uid and os.stat(entry.pw_dir).st_uid == entry.pw_uid:
                    roots.add(entry.pw_dir)
            except OSError:
                continue
    except ImportError:
        pass
    try:
        with open(mounts, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 2 and fields[2] not in _VIRTUAL:
                    roots.add(fields[1].encode().decode("unicode_escape"))
    except OSError:
        pass
    roots = sorted(
        r
        for r in roots
        if r.startswith("/") and r != "/" and os.path.isdir(r) and not os.path.islink(r)
        if not any(r == s or r.startswith(s + "/") for s in _SKIP)
    )
    return [r for r in roots if not any(r.startswith(o.rstrip("/") + "/") for o in roots)]


def _created_by(info, uid, since):
    # ctime: no one but the kernel sets it, so an old file of that uid is never taken for new.
    return info.st_uid == uid and info.st_ctime >= since - 1


def run(probes, project, kill_all, search=SAFE_PATH):
    """The outcomes the submission's code gave, by probe id (``{"error": why}`` on a failure
    of the run itself, which ``check`` scores as every probe failed), and what the probe
    process left behind that was removed (``"swept"``). ``search``: the folders the interpreter
    is found in, those the check's own PATH had (only root can write them), so the probes
    import what the check imported."""
    language = probes.get("language") or "python"
    folder = tempfile.mkdtemp(prefix="traj2env-probe-")
    os.chmod(folder, 0o755)
    home = tempfile.mkdtemp(prefix="traj2env-probe-home-")
    os.chown(home, PROBE_UID, PROBE_UID)
    started_at = time.time()
    phase = time.monotonic()
    swept = []
    try:
        expose(project)
        for name in (RUNNER[language], *RUNNER_FILES[language]):
            shutil.copyfile(os.path.join(HERE, name), os.path.join(folder, name))
            os.chmod(os.path.join(folder, name), 0o644)
        program = _program(language, os.path.join(folder, RUNNER[language]), search)
        if program is None:
            ran = {"error": f"no {language} interpreter in the image"}
        else:
            ran = _run(probes, project, program, {"PATH": search, "HOME": home}, kill_all)
    finally:
        kill_all(PROBE_UID)
        for root in sweep_roots(probes.get("writable"), project):
            swept += sweep(PROBE_UID, started_at, top=root)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    # Not the submission's verdict by itself (the reference may write a cache), but none of
    # it outlives the grading. "phase_seconds": the whole of it, sweeps included (what the
    # probes add to a grading; benchmarks/bench_probes.py reports it).
    return {**ran, "swept": len(swept), "phase_seconds": round(time.monotonic() - phase, 3)}


def _run(probes, project, program, env, kill_all):
    env = {**env, "LANG": "C.UTF-8", "NO_COLOR": "1"}
    asked = request(probes, project)
    payload = json.dumps(asked).encode()
    limit = time_limit(asked)
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            program,
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.DEVNULL,
            preexec_fn=running.demoted(PROBE_UID, PROBE_UID),
            start_new_session=True,
        )
        try:
            if not running.finish(process, payload, limit):
                return {"error": f"the probes ran past {limit:.0f} s"}
        finally:
            kill_all(PROBE_UID)
        out.seek(0)
        raw = out.read(MAX_OUTPUT + 1)
    if len(raw) > MAX_OUTPUT:
        return {"error": "the probe runner wrote more than its limit"}
    try:
        outcomes = json.loads(raw.decode("utf-8")).get("outcomes")
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return {"error": f"the probe runner wrote no report (exit {process.returncode})"}
    if not isinstance(outcomes, dict):
        return {"error": "the probe runner's report has no outcomes"}
    return {"outcomes": outcomes, "seconds": round(time.monotonic() - started, 3)}


def check(probes, ran):
    """How the submission did on the probes: counts, the failed ids and the tests they came
    from. Every probe must match the reference's outcome exactly (floats within 1e-9): the
    discriminating ones show the bug is fixed, the others that what fixed it is the reference's
    behaviour and not merely something other than the start's (the opposite of a yes-or-no
    answer, an exception raised everywhere). A probe with no outcome, or a run that failed,
    counts as failed. ``unlinked``: failed probes no test's id is known for."""
    outcomes = (ran or {}).get("outcomes")
    if not isinstance(outcomes, dict):
        outcomes = {}
    failed, tests, unlinked = [], [], 0
    for probe in probes["probes"]:
        got = outcomes.get(str(probe["id"]))
        if isinstance(got, dict) and probe_values.same(probe["expected"], got):
            continue
        failed.append(str(probe["id"]))
        linked = [str(t) for t in probe.get("tests") or () if t]
        unlinked += not linked
        tests += [t for t in linked if t not in tests]
    return {
        "probes": len(probes["probes"]),
        "discriminating": sum(1 for p in probes["probes"] if p.get("discriminating")),
        "matched": len(probes["probes"]) - len(failed),
        "failed": failed,
        "failed_tests": tests,
        "unlinked": unlinked,
        # Every test some probe came from: a fraction's scored tests with a probe of their own.
        "linked": sorted({str(t) for p in probes["probes"] for t in p.get("tests") or () if t}),
        "error": (ran or {}).get("error"),
    }


def summary(checked):
    """What anyone may read of a probe check (verdict.json, the logs): counts, never an id."""
    if checked is None:
        return None
    return {
        "probes": checked["probes"],
        "discriminating": checked["discriminating"],
        "matched": checked["matched"],
        "failed": len(checked["failed"]),
        "error": checked["error"],
    }
