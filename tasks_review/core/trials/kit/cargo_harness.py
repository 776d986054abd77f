"""traj2env cargo test harness: ``cargo test ARGS``, reporting each test's outcome to the grader.

Usage (by shim.py): python -s -E cargo_harness.py CARGO -- ARGS   (ARGS: what followed
``cargo test``)

It connects to the grader before anything of the project runs, then runs ``cargo test`` as
recorded, with Cargo's output and the test binaries' in one stream (shown as it comes), and
reads libtest's own lines: ``Running <target>`` (or ``Doc-tests <crate>``) names the test
binary, ``running N tests`` opens its results, ``test NAME ... ok|FAILED|ignored`` is one test,
and ``test result: ... P passed; F failed; I ignored`` closes them. Each test goes to the
grader as ``<target>::<name>`` when its line appears; lines after a binary's results opened
and before it closed are its only results (a failure's captured output, printed after them,
is not read). A binary whose lines do not add up to its own summary, or that said it would
run more tests than it reported, is a problem of the session.

The grader plans no control copies for it (``judging.UNCONTROLLED``): Rust's tests live in the
sources the agent edits as well as in ``tests/``, and nothing here copies them. So what the
in-process tripwires cover for Go and Python they do not cover here: a test binary (or a
``build.rs``, or code the tests call) that prints a passing run and exits 0 is believed. What
per-test results still catch: a test that failed, was skipped or vanished (one that passed on
the reference must pass again), and output that does not add up. The exit status is cargo's.
"""

import os
import re
import subprocess
import sys

import traj2env_channel

_RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)(?: \(.*\))?\s*$")
_DOCTESTS = re.compile(r"^\s*Doc-tests (\S+)\s*$")
_OPEN = re.compile(r"^running (\d+) tests?$")
_CASE = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?)$")
_CLOSE = re.compile(
    r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured;"
)
_OUTCOMES = {"ok": "passed", "FAILED": "failed"}


class Reader:
    """libtest's human output, line by line: the cases it reports and what does not add up."""

    def __init__(self, report):
        self.report = report  # called with (case id, outcome)
        self.problems = []
        self.target = "tests"
        self.counts = None  # while a binary's results are open: announced and seen
        self.reading = False  # its per-test lines (not the failures' captured output)

    def line(self, text):
        text = text.rstrip("\r\n")
        if self.counts is None:
            running, doc = _RUNNING.match(text), _DOCTESTS.match(text)
            opened = _OPEN.match(text)
            if running:
                self.target = running.group(1)
            elif doc:
                self.target = f"doc:{doc.group(1)}"
            elif opened:
                self.counts = {"announced": int(opened.group(1)), "passed": 0, "failed": 0}
                self.counts["ignored"] = 0
                self.reading = True
            return
        case = _CASE.match(text) if self.reading else None
        if case:
            outcome = _OUTCOMES.get(case.group(2), "skipped")
            self.counts["ignored" if outcome == "skipped" else outcome] += 1
            self.report(f"{self.target}::{case.group(1)}", outcome)
        elif text in ("failures:", "successes:"):
            self.reading = False
        elif closed := _CLOSE.match(text):
            self._close(*(int(n) for n in closed.groups()))

    def _close(self, passed, failed, ignored, measured):
        said = {"passed": passed, "failed": failed, "ignored": ignored}
        seen = {key: self.counts[key] for key in said}
        if seen != said or self.counts["announced"] != passed + failed + ignored + measured:
            self.problems.append(
                f"{self.target}: its test lines {seen} do not add up to its summary {said} "
                f"({self.counts['announced']} announced)"
            )
        self.counts, self.reading = None, False

    def finish(self):
        if self.counts is not None:
            self.problems.append(f"{self.target}: its results never closed (the binary died?)")


def main():
    if sys.argv[2:3] != ["--"]:
        sys.stderr.write("cargo_harness: bad arguments\n")
        return 2
    cargo, args = sys.argv[1], sys.argv[3:]
    link = traj2env_channel.Channel("cargo-test", argv=["cargo test"] + args)
    link.receive()

    def report(case_id, outcome):
        link.send({"t": "case", "id": case_id, "outcome": outcome})

    reader = Reader(report)
    env = dict(os.environ, CARGO_TERM_COLOR="never")
    process = subprocess.Popen(
        [cargo, "test"] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
    )
    for raw in process.stdout:
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
        reader.line(raw.decode("utf-8", "replace"))
    status = process.wait()
    reader.finish()
    for problem in reader.problems[:5]:
        link.send({"t": "problem", "text": problem})
    link.send({"t": "end"})
    return status


if __name__ == "__main__":
    sys.exit(main())
