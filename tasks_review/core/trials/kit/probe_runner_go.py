"""traj2env probe runner (Go): build a test binary that calls a package's functions on given inputs,
run it, print the outcomes.

Standard library only (Python 3.8+). Started as probe_runner.py is (by the grader as the probe
identity, in a fresh process after the recorded check; at keep time on the reference and on the
starting files), with the same request on stdin and the same report on stdout; a call's
``module`` is its package's folder relative to the project, its ``function`` the name of a
function the package declares at package level.

A Go test binary runs only what was compiled into it, so for each package this writes an
internal test file, ``probe_runner.go`` under the package's name with a table of the package's
functions the calls name, in a scratch folder of its own; the build reads it there through
``-overlay``, which also hides the package's own ``_test.go`` files (a test helper or TestMain
can neither break the build nor change what the functions see), so nothing is written in the
project. ``go test -c`` builds offline (no proxy, no toolchain download, ``-mod=vendor`` for a
vendored module) with a build cache it can read but not write: the grading user's, warm with
the standard library. A poisoned entry there can do no more than the code under test already
can in this process: decide what it prints, never what it is compared with. The binary runs the
generated test alone, reads its package's calls on stdin and writes one line per outcome.
"""

import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    sys.path.insert(0, HERE)  # -I leaves the script's own folder off sys.path

try:
    import running  # noqa: E402
except ImportError:  # imported on the host as part of the package (trials.probeset)
    from . import running  # type: ignore[no-redef]  # noqa: E402

TEMPLATE = "probe_runner.go"
BUILD_SECONDS = 240  # one package's build; probing.time_limit allows it per package
CACHE_OWNERS = ("grader", "agent")  # whose warm build cache the build reads, first found
TEST = "TestTraj2envProbe"
MAX_BUILD_LOG = 64 << 10
_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
# A function at package level: no receiver, no type parameters (``func F[T any](`` is left out).
_FUNC = re.compile(r"^func\s+([A-Za-z_]\w*)\s*\(", re.M)
_IGNORED = re.compile(r"^//\s*(?:go:build|\+build)\s.*\bignore\b", re.M)
_UNDEFINED = re.compile(r"undefined: (\w+)")


def package_functions(folder):
    """(the package's name, the functions it declares at package level) from its non-test
    files; ("", set()) when it has none."""
    names, funcs = {}, {}
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry)
        if not entry.endswith(".go") or entry.endswith("_test.go") or entry[0] in "._":
            continue
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
        found = _PACKAGE.search(text)
        if found is None or _IGNORED.search(text[: found.start()]):
            continue
        name = found.group(1)
        names[name] = names.get(name, 0) + 1
        funcs.setdefault(name, set()).update(_FUNC.findall(text))
    if not names:
        return "", set()
    name = max(sorted(names), key=lambda n: names[n])
    return name, funcs[name] - {"init", "_"}


def runner_source(template, package, functions):
    """The generated test file: the runner under ``package`` and the table of ``functions``."""
    source, count = re.subn(
        r"^package traj2envprobe$", f"package {package}", template, count=1, flags=re.M
    )
    if count != 1:
        raise ValueError("the runner template has no package clause to replace")
    table = "".join(f"\t{json.dumps(name)}: {name},\n" for name in sorted(functions))
    return f"{source}\nvar traj2envFuncs = map[string]interface{{}}{{\n{table}}}\n"


def write_overlay(folder, scratch, source):
    """The overlay file: the generated test added to the package, its own tests hidden."""
    generated = os.path.join(folder, "zz_traj2env_probe_test.go")
    n = 0
    while os.path.lexists(generated):
        n += 1
        generated = os.path.join(folder, f"zz_traj2env_probe{n}_test.go")
    target = os.path.join(scratch, "probe_test.go")
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(source)
    replace = {generated: target}
    for entry in os.listdir(folder):
        if entry.endswith("_test.go"):
            replace[os.path.join(folder, entry)] = ""  # read as though it were not there
    overlay = os.path.join(scratch, "overlay.json")
    with open(overlay, "w", encoding="utf-8") as handle:
        json.dump({"Replace": replace}, handle)
    return overlay


def go_env(project, folder, home):
    """The build's environment: offline, its own home, a cache it can read."""
    env = {
        "PATH": os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "GOCACHE": build_cache(home),
        **running.GO_ENV,  # offline, as the check ran
    }
    root = os.path.realpath(project)
    at = os.path.realpath(folder)
    while at == root or at.startswith(root + "/"):
        if os.path.isfile(os.path.join(at, "go.mod")):
            if os.path.isfile(os.path.join(at, "vendor", "modules.txt")):
                env["GOFLAGS"] = "-mod=vendor"
            break
        at = os.path.dirname(at)
    return env


def build_cache(home):
    for owner in CACHE_OWNERS:
        try:
            folder = os.path.join(pwd.getpwnam(owner).pw_dir, ".cache", "go-build")
        except KeyError:
            continue
        if os.path.isdir(folder) and os.access(folder, os.R_OK | os.X_OK):
            return folder
    return os.path.join(home, ".cache", "go-build")  # none: a cold one of its own (slow)


def _start(argv, folder, env, stdin, stdout, stderr):
    """``argv`` in a process group of its own, so a time limit kills all of it."""
    return subprocess.Popen(
        argv, cwd=folder, env=env, stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True
    )


def build(go, folder, scratch, env, functions, source_of):
    """The test binary's path, or None and why not. A function the table names that this
    platform's build does not have (a file for another OS) is left out and the build tried
    again."""
    binary = os.path.join(scratch, "probe.test")
    left = set(functions)
    for _attempt in range(3):
        overlay = write_overlay(folder, scratch, source_of(left))
        argv = [go, "test", "-c", "-vet=off", "-o", binary, f"-overlay={overlay}", "."]
        with tempfile.TemporaryFile(dir=scratch) as log:
            process = _start(argv, folder, env, subprocess.DEVNULL, log, subprocess.STDOUT)
            if not running.finish(process, None, BUILD_SECONDS):
                return None, left, "the package's build ran past its time limit"
            log.seek(0)
            text = log.read(MAX_BUILD_LOG).decode("utf-8", "replace")
        if process.returncode == 0 and os.path.isfile(binary):
            return binary, left, None
        missing = set(_UNDEFINED.findall(text)) & left
        if not missing:
            break
        left -= missing
    return None, left, "the package did not build with the probe runner"


def run_binary(binary, folder, env, calls, timeout):
    """{id: outcome} the binary reported, as far as it got."""
    payload = json.dumps({"timeout": timeout, "calls": calls}).encode()
    limit = 10.0 + timeout * len(calls)
    with tempfile.TemporaryFile() as out:
        argv = [binary, f"-test.run=^{TEST}$", "-test.count=1"]
        process = _start(argv, folder, env, subprocess.PIPE, out, subprocess.DEVNULL)
        running.finish(process, payload, limit)
        out.seek(0)
        lines = out.read(16 << 20).decode("utf-8", "replace").splitlines()
    wanted = {str(c["id"]) for c in calls}
    outcomes = {}
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("outcome"), dict):
            if str(record.get("id")) in wanted:
                outcomes[str(record["id"])] = record["outcome"]
    return outcomes


def probe_package(go, project, module, calls, timeout, template, scratch):
    root = os.path.realpath(project)
    folder = os.path.realpath(os.path.join(project, module))
    if not (folder == root or folder.startswith(root + "/")) or not os.path.isdir(folder):
        return {str(c["id"]): {"unavailable": "no such package"} for c in calls}
    package, declared = package_functions(folder)
    named = {c["function"] for c in calls} & declared
    outcomes = {}
    for c in calls:
        if c["function"] not in named:
            outcomes[str(c["id"])] = {"unavailable": "no such function"}
    runnable = [c for c in calls if c["function"] in named]
    if not runnable:
        return outcomes
    env = go_env(project, folder, os.environ.get("HOME") or scratch)
    binary, built, problem = build(
        go, folder, scratch, env, named, lambda left: runner_source(template, package, left)
    )
    for c in runnable:
        if binary is None or c["function"] not in built:
            outcomes[str(c["id"])] = {"unavailable": problem or "no such function"}
    if binary is not None:
        sent = [
            {"id": str(c["id"]), "function": c["function"], "args": c.get("args") or []}
            for c in runnable
            if c["function"] in built
        ]
        outcomes.update(run_binary(binary, folder, env, sent, timeout))
    return outcomes


def main():
    request = json.loads(sys.stdin.read())
    project = request["project"]
    timeout = float(request.get("timeout") or 2.0)
    with open(os.path.join(HERE, TEMPLATE), encoding="utf-8") as handle:
        template = handle.read()
    go = shutil.which("go")
    by_module = {}
    for call in request.get("calls") or ():
        by_module.setdefault(str(call.get("module") or "."), []).append(call)
    outcomes = {}
    for module, calls in sorted(by_module.items()):
        if go is None:
            outcomes.update({str(c["id"]): {"unavailable": "no go command"} for c in calls})
            continue
        scratch = tempfile.mkdtemp(prefix="traj2env-goprobe-")
        try:
            outcomes.update(probe_package(go, project, module, calls, timeout, template, scratch))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.write(json.dumps({"outcomes": outcomes}, sort_keys=True))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
