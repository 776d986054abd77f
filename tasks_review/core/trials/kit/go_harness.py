"""traj2env go test harness: ``go test ARGS``, reporting to the grader, with control copies
among the real tests.

Usage (by shim.py): python -s -E go_harness.py GO -- ARGS   (ARGS: what followed ``go test``)

It connects to the grader before anything of the project runs and lists the packages' test
functions (``go list``, which runs no project code, then their ``_test.go`` files as the grader
restored them). The grader answers which to copy: each copy is the test function's own source
under the test's name with a random suffix, verbatim or made to fail at its start, appended to
a copy of the test's file that the build reads instead of it (``-overlay``); the file on disk
stays the reference's. The copied files are removed before each package's test binary runs
(``-exec`` goes through a wrapper that deletes them), so the code under test cannot read which
tests are copies. Then ``go test -json`` runs as recorded (``-failfast`` aside: the copies made
to fail would stop it; a ``-run`` pattern also selects the copies of the tests it selects),
its output is shown as ``go test -v`` shows it, and every top-level test's outcome goes to the
grader as it ends. The exit status is what the run would have had without the controls.

Why not exit-code grading, as for ``go build`` and ``go vet``: a Go test binary ends with
status 0 whenever the code under test says so (an ``init`` that exits, or that prints a passing
run): only per-test results, with controls among them, tell a fix from that.

What stays out of reach: a test binary of one package that, while another package's copies are
still on disk (``go test`` builds and runs packages in parallel), reads them and hands them to
that package's binary; and code that reads its own test binary to tell copies apart.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import judging
import traj2env_channel

# Flags of `go test` (and the build) that take a value as the next argument.
VALUE_FLAGS = frozenset(
    "run skip bench benchtime count cpu parallel timeout tags p o exec overlay coverprofile "
    "covermode coverpkg cpuprofile memprofile memprofilerate blockprofile blockprofilerate "
    "mutexprofile mutexprofilefraction outputdir trace vet shuffle list fuzz fuzztime "
    "fuzzminimizetime fuzzcachedir mod modfile pkgdir gcflags ldflags asmflags gccgoflags "
    "toolexec compiler installsuffix buildmode pgo C".split()
)
LIST_FLAGS = frozenset({"tags", "mod", "modfile"})  # what `go list` needs to see the same files
_TEST_FUNC = re.compile(r"^func (Test(?![a-z])\w*)\s*\(\s*(\w+)\s+\*testing\.T\s*\)\s*\{", re.M)
_OUTCOMES = {"pass": "passed", "fail": "failed", "skip": "skipped"}


def split_args(args):
    """([(flag name, value or None, the words as given)], packages, test binary args)."""
    flags, packages = [], []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-args" or arg == "--args":
            return flags, packages, args[i + 1 :]
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.lstrip("-").partition("=")
            if eq:
                flags.append((name, value, [arg]))
            elif name in VALUE_FLAGS and i + 1 < len(args):
                flags.append((name, args[i + 1], [arg, args[i + 1]]))
                i += 1
            else:
                flags.append((name, None, [arg]))
        else:
            packages.append(arg)
        i += 1
    return flags, packages, []


def go_list(go, flags, packages):
    """[(dir, import path, test files)] of the packages the check tests."""
    words = [w for name, _v, given in flags if name in LIST_FLAGS for w in given]
    template = (
        '{{.Dir}}\t{{.ImportPath}}\t{{join .TestGoFiles "\\x00"}}\t{{join .XTestGoFiles "\\x00"}}'
    )
    done = subprocess.run(
        [go, "list", "-e", "-f", template, *words, *(packages or ["."])],
        capture_output=True,
        text=True,
        check=False,
    )
    found = []
    for line in done.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) != 4 or not parts[0]:
            continue
        files = [os.path.join(parts[0], f) for f in (parts[2] + "\0" + parts[3]).split("\0") if f]
        found.append((parts[0], parts[1], files))
    return found


def inventory(packages, pattern):
    """Every top-level test function the run would start (``pattern``: its -run, approximated
    with Python's re), as the grader's planner needs them."""
    tests = []
    for _folder, import_path, files in packages:
        for path in files:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    source = handle.read()
            except OSError:
                continue
            for match in _TEST_FUNC.finditer(source):
                if pattern is not None and not pattern.search(match.group(1)):
                    continue
                tests.append(
                    {"id": f"{import_path}.{match.group(1)}", "func": match.group(1), "file": path}
                )
    return tests


def function_end(source, start):
    """The index just past the ``}`` closing the function whose ``{`` is at ``start``."""
    depth = 0
    i = start
    while i < len(source):
        c = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i)
            if i < 0:
                return len(source)
            continue
        if source.startswith("/*", i):
            i = source.find("*/", i + 2) + 2 or len(source)
            continue
        if c in "\"'`":
            i += 1
            while i < len(source) and source[i] != c:
                i += 2 if c != "`" and source[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(source)


def copy_source(source, func, name, fail):
    """The source of test ``func`` as test ``name``, made to fail at its start when ``fail``."""
    for match in _TEST_FUNC.finditer(source):
        if match.group(1) != func:
            continue
        brace = match.end() - 1
        body = source[brace : function_end(source, brace)]
        if fail:
            body = "{\n\t" + match.group(2) + '.Errorf("traj2env: a control copy")' + body[1:]
        return f"\nfunc {name}({match.group(2)} *testing.T) {body}\n"
    return None


def write_overlay(packages, plan, scratch):
    """Copies into files the build reads instead of the tests' own, and the -exec wrapper that
    removes each package's before its test binary runs. (overlay path, wrapper, built copies)."""
    files = {t_file: folder for folder, _i, paths in packages for t_file in paths}
    by_file = {}
    built = {}
    for entry in plan:
        path = entry.get("file")
        if path not in files:
            continue
        if path not in by_file:
            try:
                with open(path, encoding="utf-8", errors="surrogateescape") as handle:
                    by_file[path] = handle.read()
            except OSError:
                continue
        made = copy_source(by_file[path], entry["func"], entry["name"], entry["fail"])
        if made is not None:
            by_file[path] += made
            built[entry["name"]] = {"of": entry["of"], "fail": entry["fail"]}
    replace = {}
    folders = {}  # package folder -> its scratch subfolder
    for n, (path, text) in enumerate(sorted(by_file.items())):
        key = folders.setdefault(os.path.realpath(files[path]), str(len(folders)))
        os.makedirs(os.path.join(scratch, key), exist_ok=True)
        target = os.path.join(scratch, key, f"{n}_test.go")
        with open(target, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        replace[path] = target
    overlay = os.path.join(scratch, "overlay.json")
    with open(overlay, "w") as handle:
        json.dump({"Replace": replace}, handle)
    cases = "".join(
        f"  {shlex.quote(folder)}) rm -rf {shlex.quote(os.path.join(scratch, key))} ;;\n"
        for folder, key in sorted(folders.items())
    )
    wrapper = os.path.join(scratch, "exec.sh")
    with open(wrapper, "w") as handle:
        handle.write(f'#!/bin/sh\ncase "$(pwd -P)" in\n{cases}esac\nexec "$@"\n')
    os.chmod(wrapper, 0o755)
    return overlay, wrapper, built


def rewritten(flags, packages, rest, overlay, wrapper, names):
    words = ["-json", f"-overlay={overlay}", f"-exec={wrapper}"]
    for name, value, given in flags:
        if name in ("failfast", "json"):
            continue
        if name == "run" and value is not None and names:
            # Its own tests as before, and their copies by their exact names.
            value = f"(?:{value})|^(?:{'|'.join(sorted(names))})$"
            words.append(f"-run={value}")
            continue
        words += given
    words += packages
    return words + (["-args", *rest] if rest else [])


def main():
    if sys.argv[2:3] != ["--"]:
        sys.stderr.write("go_harness: bad arguments\n")
        return 2
    go, args = sys.argv[1], sys.argv[3:]
    flags, packages, rest = split_args(args)
    names = {name for name, _v, _g in flags}
    raw_json = "json" in names
    link = traj2env_channel.Channel("go-test", argv=["go test"] + args)
    link.receive()
    record = {"complete": True, "problems": [], "cases": [], "copies": {}, "baseline": False}
    run = [v for n, v, _g in flags if n == "run" and v is not None]
    pattern = None
    if run:
        try:
            pattern = re.compile(run[-1].split("/", 1)[0]) if "/" not in run[-1] else None
        except re.error:
            pattern = None
    listed = go_list(go, flags, packages)
    # A pattern with levels (-run A/B) or a check that brings its own overlay or -exec gets no
    # copies (and so no reward): the copies could not be selected or built alongside.
    copyable = not ({"overlay", "exec"} & names) and not (run and "/" in run[-1])
    tests = inventory(listed, pattern) if copyable else []
    by_id = {t["id"]: t for t in tests}
    link.send({"t": "tests", "tests": [{"id": t["id"], "func": t["func"]} for t in tests]})
    answer = link.receive()
    record["baseline"] = bool(answer.get("baseline"))
    plan = []
    for entry in answer.get("copies") or []:
        test = by_id.get(entry.get("of"))
        if test is not None:
            plan.append({**entry, "func": test["func"], "file": test["file"]})
    scratch = tempfile.mkdtemp(prefix="traj2env-go-")
    overlay, wrapper, built = write_overlay(listed, plan, scratch)
    record["copies"] = built
    argv = [go, "test", *rewritten(flags, packages, rest, overlay, wrapper, set(built))]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE)
    tests_failed, packages_failed = set(), set()
    for line in process.stdout:
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            sys.stdout.buffer.write(line)
            continue
        if raw_json:
            sys.stdout.buffer.write(line)
        elif event.get("Action") == "output":
            sys.stdout.write(str(event.get("Output") or ""))
        sys.stdout.flush()
        package = event.get("Package")
        test, outcome = event.get("Test"), _OUTCOMES.get(event.get("Action"))
        if test and outcome and "/" not in test:
            case_id = f"{package}.{test}"
            record["cases"].append([case_id, outcome])
            link.send({"t": "case", "id": case_id, "outcome": outcome})
            if outcome == "failed":
                tests_failed.add(package)
        elif not test and event.get("Action") == "fail":
            packages_failed.add(package)
    status = process.wait()
    link.send({"t": "end"})
    if packages_failed - tests_failed:
        return status or 1  # a package failed with no test failing: it did not build or set up
    return judging.runner_status(record, status)


if __name__ == "__main__":
    sys.exit(main())
