"""traj2env unittest harness: ``python -m unittest ARGS`` with JSON results and control tests.

Usage (by shim.py): python unittest_harness.py RESULT_FILE NONCE -- ARGS

Everything this file needs is imported before the project's folder enters ``sys.path``, so a
``unittest.py`` or ``json.py`` in the project cannot stand in for the standard library here
(``python -m unittest`` run from the project folder would import the project's). Then the
folder goes first on ``sys.path``, as ``-m`` would put it, and unittest's own command line
runs with two control tests added after the real ones: one must pass and one must fail, both
through ``TestCase.assertEqual`` like real tests. A run where the must-fail control passed, or
whose results are missing, was forged in-process; the parent process decides that.
"""

import json
import os
import sys
import unittest

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def main():
    result_file, nonce, separator = sys.argv[1:4]
    if separator != "--":
        sys.stderr.write("unittest_harness: bad arguments\n")
        return 2
    args = sys.argv[4:]
    sys.path[0] = os.getcwd()  # where `python -m unittest` puts the current folder
    records = []

    class Recorder(unittest.TextTestResult):
        def _record(self, test, outcome, err=None):
            detail = self._exc_info_to_string(err, test) if err is not None else ""
            records.append({"id": test.id(), "outcome": outcome, "detail": detail[-2000:]})

        def addSuccess(self, test):
            super().addSuccess(test)
            self._record(test, "passed")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._record(test, "failed", err)

        def addError(self, test, err):
            super().addError(test, err)
            self._record(test, "error", err)

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
                self._record(subtest, "failed" if failed else "error", err)

    must_pass = "test_traj2env_control_must_pass_" + nonce
    must_fail = "test_traj2env_control_must_fail_" + nonce

    def passing(self):
        self.assertEqual(1, 1)

    def failing(self):
        self.assertEqual(1, 2)

    controls = type(
        "Traj2envControls", (unittest.TestCase,), {must_pass: passing, must_fail: failing}
    )

    class Program(unittest.TestProgram):
        def runTests(self):
            # After the real tests, so a patch made while they were imported or ran applies.
            suite = unittest.TestSuite([self.test, controls(must_pass), controls(must_fail)])
            runner = unittest.TextTestRunner(
                verbosity=self.verbosity,
                failfast=self.failfast,
                buffer=self.buffer,
                warnings=self.warnings,
                tb_locals=getattr(self, "tb_locals", False),
                resultclass=Recorder,
            )
            runner.run(suite)
            write(result_file, nonce, records)
            sys.exit(status(records, nonce))

    Program(module=None, argv=["python -m unittest"] + args)
    return 0


def status(records, nonce):
    """0 when every real test passed (or was skipped) and both controls behaved, else 1."""
    real = [r for r in records if nonce not in r["id"]]
    controls = {r["id"].rsplit("_", 2)[-2]: r["outcome"] for r in records if nonce in r["id"]}
    if controls != {"pass": "passed", "fail": "failed"}:
        return 1
    bad = [r for r in real if r["outcome"] in ("failed", "error", "xpassed")]
    return 1 if bad else 0


def write(path, nonce, records):
    data = json.dumps({"runner": "unittest", "nonce": nonce, "tests": records})
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(data)


if __name__ == "__main__":
    sys.exit(main())
