"""traj2env unittest harness: ``python -m unittest ARGS``, reporting to the grader, with
control copies among the real tests.

Usage (by shim.py): python -s [-E] unittest_harness.py -- ARGS

Everything this file needs is imported before the project's folder enters ``sys.path``, so a
``unittest.py`` or ``json.py`` in the project cannot stand in for the standard library here.
It connects to the grader before any project code runs. Then the folder goes first on
``sys.path``, as ``-m`` would put it, and unittest's own command line loads the tests. The
grader hears which tests were found and answers which to copy: each copy is the real test's
function read again from the reference's file on disk, under a random name, verbatim or with
one assertion made false, placed among its class's tests. Every outcome goes to the grader as
the test ends; nothing is written to a file.
"""

import ast
import os
import random
import sys
import unittest

import copies
import judging
import traj2env_channel

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_RANDOM = random.SystemRandom()


def flat(suite):
    """The test cases of a suite, in run order."""
    if isinstance(suite, unittest.TestSuite):
        for test in suite:
            yield from flat(test)
    else:
        yield suite


def describe(test):
    method = getattr(test, getattr(test, "_testMethodName", ""), None)
    code = getattr(getattr(method, "__func__", method), "__code__", None)
    return {
        "id": test.id(),
        "file": code.co_filename if code is not None else "",
        "qualname": f"{type(test).__qualname__}.{getattr(test, '_testMethodName', '')}",
    }


def build_copies(tests, plan):
    """(copy test, the test it copies) for every planned copy that could be built."""
    by_id = {t.id(): t for t in tests}
    trees = {}
    built = []
    for entry in plan:
        original = by_id.get(entry["of"])
        if original is None:
            continue
        try:
            path = entry["file"]
            if path not in trees:
                with open(path, "rb") as handle:
                    trees[path] = ast.parse(handle.read())
            function = copies.find(trees[path], entry["qualname"])
            node = copies.make(function, entry["name"], entry.get("at") if entry["fail"] else None)
            namespace = sys.modules[type(original).__module__].__dict__
            setattr(type(original), entry["name"], copies.compile_function(node, path, namespace))
            built.append((type(original)(entry["name"]), original))
        except Exception:  # a copy that cannot be built is missing; the grader sees that
            continue
    return built


def placed(tests, built):
    """``tests`` with each copy at a random place among its class's tests."""
    order = list(tests)
    for copy, original in built:
        same = [i for i, t in enumerate(order) if type(t) is type(original)]
        where = _RANDOM.randint(same[0], same[-1] + 1) if same else len(order)
        order.insert(where, copy)
    return unittest.TestSuite(order)


def main():
    if sys.argv[1:2] != ["--"]:
        sys.stderr.write("unittest_harness: bad arguments\n")
        return 2
    args = sys.argv[2:]
    link = traj2env_channel.Channel("unittest", argv=["python -m unittest"] + args)
    link.receive()
    sys.path[0] = os.getcwd()  # where `python -m unittest` puts the current folder
    record = {"complete": True, "problems": [], "cases": [], "copies": {}, "baseline": False}

    class Recorder(unittest.TextTestResult):
        def _record(self, test, outcome):
            record["cases"].append([test.id(), outcome])
            link.send({"t": "case", "id": test.id(), "outcome": outcome})

        def addSuccess(self, test):
            super().addSuccess(test)
            self._record(test, "passed")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._record(test, "failed")

        def addError(self, test, err):
            super().addError(test, err)
            self._record(test, "error")

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._record(test, "skipped")

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._record(test, "xfailed")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._record(test, "xpassed")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                failed = issubclass(err[0], test.failureException)
                self._record(subtest, "failed" if failed else "error")

    class Program(unittest.TestProgram):
        def runTests(self):
            tests = list(flat(self.test))
            link.send({"t": "tests", "tests": [describe(t) for t in tests]})
            answer = link.receive()
            plan = answer.get("copies") or []
            record["baseline"] = bool(answer.get("baseline"))
            record["copies"] = {e["name"]: {"of": e["of"], "fail": e["fail"]} for e in plan}
            runner = unittest.TextTestRunner(
                verbosity=self.verbosity,
                failfast=self.failfast,
                buffer=self.buffer,
                warnings=self.warnings,
                tb_locals=getattr(self, "tb_locals", False),
                resultclass=Recorder,
            )
            runner.run(placed(tests, build_copies(tests, plan)))
            link.send({"t": "end"})
            sys.exit(judging.runner_status(record, 0))

    Program(module=None, argv=["python -m unittest"] + args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
