"""traj2env grader shim: stands first on PATH as python, python3, pytest and node in the verifier.

It runs inside the task's container (Python 3.8+, standard library only) with ``python -I``,
so nothing in the project can shadow what it imports. A test-runner invocation is redirected
through an instrumented runner that writes machine-readable results and adds the two
contradictory control tests; anything else is handed to the real program untouched.

    python -m unittest ARGS   -> unittest_harness.py (JSON results, controls in the suite)
    python -m pytest ARGS     -> the same pytest plus --junitxml and the controls plugin
    pytest ARGS               -> likewise
    node --test ARGS          -> the same node plus a junit reporter and the controls preload

Each instrumented invocation is appended to ``invocations.jsonl`` in the results folder;
the harness process outside the container parses the result files itself. The runner's own
exit status would be 1 because of the must-fail control, which would break ``a && b`` in the
recorded command, so instrumented runs exit with the status the run would have had without
the controls, as far as this process can tell.
"""

import json
import os
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ElementTree

KIT = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(KIT, "bin")
RESULTS = os.environ.get("TRAJ2ENV_RESULTS", "")
NONCE = os.environ.get("TRAJ2ENV_NONCE", "")

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


def record(kind, argv, result):
    line = json.dumps({"kind": kind, "argv": argv, "cwd": os.getcwd(), "result": result})
    fd = os.open(
        os.path.join(RESULTS, "invocations.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
    )
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def result_name(suffix):
    return f"{uuid.uuid4().hex[:12]}.{suffix}"


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
    if not RESULTS or module not in ("unittest", "pytest"):
        os.execv(program, [program] + args)
    if module == "unittest":
        name = result_name("unittest.json")
        record("unittest", [tool] + args, name)
        harness = os.path.join(KIT, "unittest_harness.py")
        target = os.path.join(RESULTS, name)
        os.execv(program, [program] + options + [harness, target, NONCE, "--"] + rest)
    name = result_name("junit.xml")
    record("pytest", [tool] + args, name)
    os.execve(
        program,
        [program] + options + ["-m", "pytest"] + pytest_extra(rest, name),
        pytest_env(),
    )
    return 0  # not reached


def pytest_extra(rest, name):
    # The plugin is named on the command line so a pytest.ini the project ships cannot
    # disable it; -p no:... for it would have to be in the recorded command.
    return rest + [
        "-p",
        "traj2env_pytest_controls",
        "--junitxml=" + os.path.join(RESULTS, name),
        "-o",
        "junit_family=xunit2",
    ]


def pytest_env():
    env = dict(os.environ)
    pythonpath = env.get("PYTHONPATH")
    env["PYTHONPATH"] = KIT + (os.pathsep + pythonpath if pythonpath else "")
    return env


def run_pytest(tool, args):
    program = real(tool)
    if program is None:
        sys.stderr.write(f"{tool}: command not found\n")
        return 127
    if not RESULTS:
        os.execv(program, [program] + args)
    name = result_name("junit.xml")
    record("pytest", [tool] + args, name)
    os.execve(program, [program] + pytest_extra(args, name), pytest_env())
    return 0  # not reached


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
    if not RESULTS or not testing:
        os.execv(program, [program] + args)
    name = result_name("junit.xml")
    record("node-test", [tool] + args, name)
    target = os.path.join(RESULTS, name)
    argv = (
        [program]
        + without_reporters(options)
        + ["--require", os.path.join(KIT, "node_controls.cjs")]
        + ["--test-reporter=spec", "--test-reporter-destination=stdout"]
        + ["--test-reporter=junit", "--test-reporter-destination=" + target]
        + rest
    )
    status = subprocess.call(argv)
    return node_status(status, target)


def node_status(status, target):
    """The exit status node would have had without the two controls.

    Only a run whose one failure set is exactly the must-fail controls becomes 0; a run where
    a must-fail control passed becomes 1 whatever node said (the results were forged).
    """
    try:
        cases = list(ElementTree.parse(target).getroot().iter("testcase"))
    except (OSError, ElementTree.ParseError):
        return status or 1
    must_pass = [c for c in cases if c.get("name", "").endswith("must pass " + NONCE)]
    must_fail = [c for c in cases if c.get("name", "").endswith("must fail " + NONCE)]
    failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    controls_ok = (
        must_pass
        and len(must_pass) == len(must_fail)
        and not any(c in failed for c in must_pass)
        and all(c in failed for c in must_fail)
    )
    if not controls_ok:
        return 1
    if status == 1 and all(c in must_fail for c in failed):
        return 0
    return status or 1


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
    sys.stderr.write(f"traj2env shim: unknown tool {tool}\n")
    return 127


if __name__ == "__main__":
    sys.exit(main())
