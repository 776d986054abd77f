"""traj2env judging rules: the runners' machine-readable results in, a reward out.

Standard library only (Python 3.8+): the same file is imported by the harness on the host
(``trials.results``) and shipped inside every task's ``tests/`` for ``grade.py``, so the
task's own grader and the trial matrix decide a reward by the same rules. A run scores 1
only when

* the check exited 0 within its time limit (exit statuses of instrumented runners have the
  controls taken out, so ``a && b`` chains as recorded),
* every runner the plan expects left results, each parseable, with at least one real test,
* in every result, each must-pass control passed and each must-fail control failed, in equal
  numbers: a forged "everything passed" flips the must-fail control too,
* no real test failed or errored,
* and every test that passed on the reference (inside the image) passed again: tests that
  vanished, or were skipped, do not count as passes.

A check without a test runner we instrument (a build, a linter, a plain script) is graded by
its exit status alone (``grading: exit_code``).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass, field

UNITTEST = "unittest"
PYTEST = "pytest"
NODE_TEST = "node-test"
PASSED = "passed"
FAILED = "failed"
ERROR = "error"
SKIPPED = "skipped"
_BAD = frozenset({FAILED, ERROR, "xpassed"})
MAX_RESULT_BYTES = 8 << 20  # one runner's results; anything larger is not a real report
MAX_INVOCATIONS = 50
MANIFEST = "invocations.jsonl"


class ResultError(ValueError):
    """A result file that cannot be read: missing, too large, or not what its runner writes."""


@dataclass(frozen=True)
class CaseResult:
    id: str
    outcome: str  # passed, failed, error, skipped, xfailed, xpassed


@dataclass(frozen=True)
class RunnerReport:
    kind: str  # unittest, pytest or node-test
    argv: tuple = ()
    cases: tuple = ()
    problem: object = None  # why the results could not be read (a str), or None

    def controls(self, nonce):
        """Outcomes of the must-pass and the must-fail controls."""
        must_pass = [c.outcome for c in self.cases if _is_control(c.id, "pass", nonce)]
        must_fail = [c.outcome for c in self.cases if _is_control(c.id, "fail", nonce)]
        return must_pass, must_fail

    def real(self, nonce):
        return [c for c in self.cases if nonce not in c.id]


def _is_control(case_id, which, nonce):
    # unittest and pytest name them test_..._must_pass_<nonce>, node "... must pass <nonce>";
    # node ids may end in "#2" when several test files each ran the pair.
    return nonce in case_id and (
        f"must_{which}_{nonce}" in case_id or f"must {which} {nonce}" in case_id
    )


@dataclass(frozen=True)
class Verdict:
    reward: float
    reasons: tuple  # why not 1; empty when 1
    grading: str  # "structured" or "exit_code"
    passed: dict = field(default_factory=dict)  # real test id -> times passed
    detail: dict = field(default_factory=dict)


def parse_unittest_json(data):
    try:
        payload = json.loads(data)
        tests = payload["tests"]
        return [CaseResult(str(t["id"]), str(t["outcome"])) for t in tests]
    except (ValueError, KeyError, TypeError) as exc:
        raise ResultError(f"unittest results are not the harness's JSON: {exc}") from None


def parse_junit(data):
    """Test cases of a JUnit XML report (pytest's xunit2 and node's junit reporter).

    Case ids are the suite path and name; node gives no file name, so a name that appears in
    several files gets ``#2``, ``#3``... in document order.
    """
    # Python's expat refuses entity-expansion bombs (billion laughs) since 3.7.1 / expat 2.4,
    # so the standard parser is safe on a file the code under test may have written.
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ResultError(f"the JUnit report is not XML: {exc}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ResultError(f"the JUnit report's root is <{root.tag}>")
    cases = []
    seen = Counter()

    def walk(node, path):
        for child in node:
            if child.tag == "testsuite":
                name = child.get("name") or ""
                # pytest wraps everything in one suite named "pytest"; node names suites
                # after describe() blocks.
                walk(child, path if name in ("", "pytest") else (*path, name))
            elif child.tag == "testcase":
                base = " > ".join((*path, child.get("classname") or "", child.get("name") or ""))
                seen[base] += 1
                case_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
                cases.append(CaseResult(case_id, _junit_outcome(child)))

    walk(root, ())
    return cases


def _junit_outcome(case):
    if case.find("failure") is not None or case.get("failure") is not None:
        return FAILED
    if case.find("error") is not None:
        return ERROR
    if case.find("skipped") is not None:
        return SKIPPED
    return PASSED


def read_reports(files):
    """The reports of every instrumented invocation, from a results folder as {name: bytes}."""
    manifest = files.get(MANIFEST)
    if manifest is None:
        return []
    reports = []
    for line in manifest.decode("utf-8", "replace").splitlines()[:MAX_INVOCATIONS]:
        try:
            entry = json.loads(line)
            kind, name = str(entry["kind"]), str(entry["result"])
            argv = tuple(str(a) for a in entry.get("argv") or ())
        except (ValueError, KeyError, TypeError, AttributeError):
            reports.append(RunnerReport("unknown", (), problem=f"unreadable record {line[:80]!r}"))
            continue
        reports.append(_report(kind, argv, files.get(name)))
    return reports


def _report(kind, argv, data):
    if data is None:
        return RunnerReport(kind, argv, problem="the runner left no results (killed or forged?)")
    if len(data) > MAX_RESULT_BYTES:
        return RunnerReport(kind, argv, problem=f"results larger than {MAX_RESULT_BYTES} bytes")
    try:
        if kind == UNITTEST:
            cases = parse_unittest_json(data)
        elif kind in (PYTEST, NODE_TEST):
            cases = parse_junit(data)
        else:
            return RunnerReport(kind, argv, problem=f"unknown runner kind {kind!r}")
    except ResultError as exc:
        return RunnerReport(kind, argv, problem=str(exc))
    return RunnerReport(kind, argv, tuple(cases))


def judge(exit_code, timed_out, seconds, reports, structured, nonce, reference=None):
    """The reward of one graded run (see the module docstring for the rules).

    ``structured``: the runner kinds whose results must appear; ``reference``: real test id ->
    times it passed on the reference.
    """
    reports = list(reports)
    structured = frozenset(structured)
    reasons = []
    passed = Counter()
    summary = []
    if timed_out:
        reasons.append(f"the check ran past its time limit ({seconds:.0f} s)")
    elif exit_code != 0:
        reasons.append(f"the check exited with status {exit_code}")
    kinds = {r.kind for r in reports}
    for missing in sorted(structured - kinds):
        reasons.append(f"no {missing} results: the runner never reported (bypassed or killed)")
    for report in reports:
        must_pass, must_fail = report.controls(nonce)
        real = report.real(nonce)
        summary.append(
            {
                "kind": report.kind,
                "argv": list(report.argv),
                "tests": len(real),
                "failed": sum(c.outcome in _BAD for c in real),
                "must_pass": must_pass,
                "must_fail": must_fail,
                "problem": report.problem,
            }
        )
        if report.problem:
            reasons.append(f"{report.kind}: {report.problem}")
            continue
        if not must_pass or len(must_pass) != len(must_fail):
            reasons.append(f"{report.kind}: the control tests did not run (results forged?)")
        elif any(o != PASSED for o in must_pass):
            reasons.append(f"{report.kind}: the must-pass control did not pass")
        elif any(o != FAILED for o in must_fail):
            reasons.append(
                f"{report.kind}: the must-fail control was reported {must_fail[0]}: "
                "results were forged in-process"
            )
        if not real:
            reasons.append(f"{report.kind}: no real test ran")
        bad = [c for c in real if c.outcome in _BAD]
        if bad:
            names = ", ".join(c.id for c in bad[:3])
            reasons.append(f"{report.kind}: {len(bad)} test(s) did not pass: {names}")
        passed.update(c.id for c in real if c.outcome == PASSED)
    if reference:
        short = sorted(k for k, n in reference.items() if passed[k] < n)
        if short:
            shown = ", ".join(short[:3])
            reasons.append(f"{len(short)} test(s) that pass on the reference did not: {shown}")
    return Verdict(
        reward=0.0 if reasons else 1.0,
        reasons=tuple(reasons),
        grading="structured" if structured else "exit_code",
        passed=dict(passed),
        detail={"runners": summary, "exit_code": exit_code, "timed_out": timed_out},
    )
