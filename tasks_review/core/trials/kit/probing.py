"""Equivalence probes at grading time: the submission's functions on hidden inputs, judged by root.

Standard library only (Python 3.8+); ``grade.py`` uses it in the verifier and the host imports
``check`` to judge the same outcomes again (``trials.probes``).

``tests/probes.json`` (written when the task was kept, see ``trials/probes.py``) holds inputs
the tests' own calls into the project were derived into, with the reference's outcome on each;
the *discriminating* ones are those where the reference and the starting code disagree. It is
root's alone: ``lock`` makes it and its folder unreadable to anyone else before anything of the
submission runs, and it never reaches the project, the graded process's environment or its
arguments. After the recorded check, ``run`` starts a fresh process as the grading user
(``probe_runner.py`` or ``probe_runner.cjs`` from a root-owned folder of its own) that imports
the submission's modules, reads the inputs on stdin and prints what the code returned or
raised; every process of that user is killed afterwards. ``check`` compares in this process.
The submission can make that process print anything; it cannot learn the expected outcomes,
so only code that computes them scores.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

try:
    import probe_values
except ImportError:  # imported on the host as part of the package (trials.probeset)
    from . import probe_values  # type: ignore[no-redef]

PROBES = "probes.json"
RUNNER = {"python": "probe_runner.py", "node": "probe_runner.cjs"}
MAX_OUTPUT = 4 << 20
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
HERE = os.path.dirname(os.path.abspath(__file__))


def lock(folder):
    """Make the probes root's alone (call first thing, before any submission code runs)."""
    path = os.path.join(folder, PROBES)
    if os.path.lexists(path):
        os.chmod(path, 0o600)
    os.chmod(folder, 0o700)


def load(folder):
    """The probe set beside grading.json, or None (a check-only task)."""
    path = os.path.join(folder, PROBES)
    if not os.path.isfile(path) or os.path.islink(path):
        return None
    with open(path, encoding="utf-8") as handle:
        probes = json.load(handle)
    return probes if isinstance(probes, dict) and probes.get("probes") else None


def request(probes, project):
    """What the runner reads on stdin: the inputs, never the expected outcomes."""
    return {
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


def _program(language, runner, search):
    if language == "node":
        node = shutil.which("node", path=search)
        return [node, runner] if node else None
    python = shutil.which("python3", path=search)
    return [python, "-I", runner] if python else None


def run(probes, project, uid, gid, home, kill_all, search=SAFE_PATH):
    """The outcomes the submission's code gave, by probe id (``{"error": why}`` on a failure
    of the run itself, which ``check`` scores as every probe failed). ``search``: the folders
    the interpreter is found in, those the check's own PATH had (only root can write them), so
    the probes import what the check imported."""
    language = probes.get("language") or "python"
    folder = tempfile.mkdtemp(prefix="traj2env-probe-")
    os.chmod(folder, 0o755)
    try:
        for name in (RUNNER[language], "probe_values.py", "probe_values.cjs"):
            shutil.copyfile(os.path.join(HERE, name), os.path.join(folder, name))
            os.chmod(os.path.join(folder, name), 0o644)
        program = _program(language, os.path.join(folder, RUNNER[language]), search)
        if program is None:
            return {"error": f"no {language} interpreter in the image"}

        def demote():
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)

        env = {"PATH": search, "HOME": home, "LANG": "C.UTF-8", "NO_COLOR": "1"}
        payload = json.dumps(request(probes, project)).encode()
        limit = 10.0 + float(probes.get("call_timeout") or 2.0) * len(probes["probes"])
        started = time.monotonic()
        with tempfile.TemporaryFile() as out:
            process = subprocess.Popen(
                program,
                cwd=project,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=subprocess.DEVNULL,
                preexec_fn=demote,
                start_new_session=True,
            )
            try:
                process.communicate(payload, timeout=min(limit, 300.0))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except OSError:
                    pass
                process.wait()
                return {"error": f"the probes ran past {min(limit, 300.0):.0f} s"}
            finally:
                kill_all(uid)
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
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check(probes, ran):
    """How the submission did on the probes: counts, the failed ids and the tests they came
    from. Every discriminating probe must match the reference's outcome exactly (floats within
    1e-9); a probe with no outcome, or a run that failed, counts as failed."""
    outcomes = (ran or {}).get("outcomes")
    if not isinstance(outcomes, dict):
        outcomes = {}
    failed, tests, agreed = [], [], 0
    discriminating = [p for p in probes["probes"] if p.get("discriminating")]
    for probe in probes["probes"]:
        got = outcomes.get(str(probe["id"]))
        ok = isinstance(got, dict) and probe_values.same(probe["expected"], got)
        if not probe.get("discriminating"):
            agreed += ok
            continue
        if not ok:
            failed.append(str(probe["id"]))
            test = probe.get("test") or ""
            key = [test, probe.get("test_function") or ""]
            if key not in tests:
                tests.append(key)
    return {
        "probes": len(probes["probes"]),
        "discriminating": len(discriminating),
        "matched": len(discriminating) - len(failed),
        "failed": failed[:50],
        "failed_tests": tests[:50],
        "other_agreed": agreed,
        "error": (ran or {}).get("error"),
    }
