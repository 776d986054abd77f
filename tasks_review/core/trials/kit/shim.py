"""traj2env grader shim: stands first on PATH as python, python3, pytest, node, go and cargo in
the verifier.

It runs inside the task's container (Python 3.8+, standard library only) with ``python -I``,
so nothing in the project can shadow what it imports. A test-runner invocation is redirected
through an instrumented runner that reports to the grader over its socket (``report.sock`` in
this kit's folder) and runs control copies among the real tests; anything else is handed to
the real program untouched. Nothing about the grading travels in the environment, in files or
in arguments: the runners learn what to copy from the grader itself.

    python -m unittest ARGS   -> python -s [-E] unittest_harness.py -- ARGS
    python -m pytest ARGS     -> python -s [-E] pytest_boot.py module -- ARGS (+ the plugin)
    pytest ARGS               -> python -s [-E] pytest_boot.py SCRIPT -- ARGS
    node --test ARGS          -> the same node, the controls preloaded in every test process
                                 (--import) and a reporter that reports to the grader
    go test ARGS              -> python -s -E go_harness.py GO -- ARGS (go test -json, the
                                 controls in an overlay of the test files)
    cargo test ARGS           -> python -s -E cargo_harness.py CARGO -- ARGS (libtest's own
                                 lines read test by test; no controls), when its output shows
                                 every test (judging.cargo_per_test)

``-E`` (ignore PYTHON* variables) is added when the check did not set any: the interpreter runs
as isolated as the recorded command allows (``-I`` would drop the project from the path).
The runner's own exit status would be 1 because of the must-fail copies, which would break
``a && b`` in the recorded command, so instrumented runs exit with the status the run would
have had without the controls; for node the grader says which.
"""

import os
import subprocess
import sys

KIT = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(KIT, "bin")
sys.path.insert(0, KIT)  # -I leaves the script's own folder off sys.path

import traj2env_channel  # noqa: E402

# Python options that take no value; -W, -X and --check-hash-based-pycs take one.
_PY_VALUE_OPTIONS = ("-W", "-X", "--check-hash-based-pycs")
# node options whose value is the next argument (those written with '=' need nothing).
_NODE_VALUE_OPTIONS = (
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--conditions",
    "-C",
    "--test-name-pattern",
    "--test-reporter",
    "--test-reporter-destination",
    "--test-concurrency",
    "--input-type",
    "--title",
    "--env-file",
    "--stack-size",
    "--max-old-space-size",
)


def real(tool):
    """The program ``tool`` resolves to on PATH once this kit's folder is taken out."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or os.path.abspath(folder) == BIN:
            continue
        candidate = os.path.join(folder, tool)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def isolation():
    """Interpreter options: no user site; no PYTHON* variables unless the check set some."""
    if any(name.startswith("PYTHON") for name in os.environ):
        return ["-s"]
    return ["-s", "-E"]


def split_python(args):
    """(options before the module, module or None, the module's arguments)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-m":
            if i + 1 < len(args):
                return args[:i], args[i + 1], args[i + 2 :]
            return args, None, []
        if arg.startswith("-m") and len(arg) > 2 and not arg.startswith("--"):
            return args[:i], arg[2:], args[i + 1 :]
        if arg in _PY_VALUE_OPTIONS:
            i += 2
            continue
        if arg == "-" or arg == "--" or not arg.startswith("-") or arg.startswith("-c"):
            return args, None, []  # a script, stdin or -c: not a runner we instrument
        i += 1
    return args, None, []


def run_python(tool, args):
    program = real(tool)
    if program is None:
        sys.stderr.write(f"{tool}: command not found\n")
        return 127
    options, module, rest = split_python(args)
    if not traj2env_channel.available() or module not in ("unittest", "pytest"):
        os.execv(program, [program] + args)
    if module == "unittest":
        script = [os.path.join(KIT, "unittest_harness.py"), "--"]
    else:
        script = [os.path.join(KIT, "pytest_boot.py"), "module", "--"]
    os.execv(program, [program] + options + isolation() + script + rest)
    return 0  # not reached


def run_pytest(tool, args):
    program = real(tool)
    if program is None:
        sys.stderr.write(f"{tool}: command not found\n")
        return 127
    if not traj2env_channel.available():
        os.execv(program, [program] + args)
    python = interpreter_of(program)
    if python is None:
        os.execv(program, [program] + args)  # not a Python script: it reports nothing
    boot = [os.path.join(KIT, "pytest_boot.py"), program, "--"]
    os.execv(python, [python] + isolation() + boot + args)
    return 0  # not reached


def interpreter_of(script):
    """The Python a console script's ``#!`` line names, or None."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if words and os.path.basename(words[0]).startswith("python") and os.path.isfile(words[0]):
        return words[0]
    return None


def split_node(args):
    """(node options, whether --test is among them, the rest from the first script or file)."""
    i = 0
    testing = False
    while i < len(args):
        arg = args[i]
        if arg == "--test":
            testing = True
        elif arg == "--":
            return args[:i], testing, args[i:]
        elif arg in _NODE_VALUE_OPTIONS:
            i += 2
            continue
        elif not arg.startswith("-") or arg in ("-e", "--eval", "-p", "--print", "-"):
            return args[:i], testing, args[i:]
        i += 1
    return args, testing, []


def without_reporters(options):
    # Our reporters replace the command's own (reporters only change how results are shown).
    kept = []
    skip = False
    for arg in options:
        if skip:
            skip = False
            continue
        if arg in ("--test-reporter", "--test-reporter-destination"):
            skip = True
            continue
        if arg.startswith("--test-reporter=") or arg.startswith("--test-reporter-destination="):
            continue
        kept.append(arg)
    return kept


def run_node(tool, args):
    program = real(tool)
    if program is None:
        sys.stderr.write(f"{tool}: command not found\n")
        return 127
    options, testing, rest = split_node(args)
    if not traj2env_channel.available() or not testing:
        os.execv(program, [program] + args)
    argv = (
        [program]
        + without_reporters(options)
        + ["--import", os.path.join(KIT, "node_controls.mjs")]
        + ["--test-reporter=spec", "--test-reporter-destination=stdout"]
        + ["--test-reporter=" + os.path.join(KIT, "node_reporter.cjs")]
        + ["--test-reporter-destination=stdout"]
        + rest
    )
    runner = subprocess.Popen(argv)
    status = runner.wait()
    try:
        return traj2env_channel.status(runner.pid, status)
    except (OSError, ValueError):
        return status or 1


def run_go(tool, args):
    program = real(tool)
    if program is None:
        sys.stderr.write(f"{tool}: command not found\n")
        return 127
    if not traj2env_channel.available() or args[:1] != ["test"]:
        os.execv(program, [program] + args)  # go build, go vet ...: graded by exit status
    harness = os.path.join(KIT, "go_harness.py")
    os.execv(sys.executable, [sys.executable, "-s", "-E", harness, program, "--"] + args[1:])
    return 0  # not reached


def run_cargo(tool, args):
    program = real(tool)
    if program is None:
        sys.stderr.write(f"{tool}: command not found\n")
        return 127
    import judging

    testing = args[:1] == ["test"] and judging.cargo_per_test(args[1:])
    if not traj2env_channel.available() or not testing:
        os.execv(program, [program] + args)  # cargo build, a terse test run: by exit status
    harness = os.path.join(KIT, "cargo_harness.py")
    os.execv(sys.executable, [sys.executable, "-s", "-E", harness, program, "--"] + args[1:])
    return 0  # not reached


def main():
    tool = sys.argv[1]
    args = sys.argv[2:]
    base = os.path.basename(tool)
    if base.startswith("python"):
        return run_python(tool, args)
    if base in ("pytest", "py.test"):
        return run_pytest(tool, args)
    if base in ("node", "nodejs"):
        return run_node(tool, args)
    if base == "go":
        return run_go(tool, args)
    if base == "cargo":
        return run_cargo(tool, args)
    sys.stderr.write(f"traj2env shim: unknown tool {tool}\n")
    return 127


if __name__ == "__main__":
    sys.exit(main())
