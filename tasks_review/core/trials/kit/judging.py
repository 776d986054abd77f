"""traj2env judging rules: the runners' reports in, a reward out.

Standard library only (Python 3.8+): the same file is imported by the harness on the host
(``trials.results``), by ``grade.py`` inside the task's verifier and by the instrumented runners
(for their exit status), so every place decides by the same rules.

A report is a *session*: one instrumented runner invocation that reported, test by test, over
the grader's socket (see ``grade.py``), and the control copies the grader planned for it (real
tests copied under random names, some verbatim and some with an assertion made false). A run
scores 1 only when

* the check exited 0 within its time limit (instrumented runners exit as they would have
  without the controls, so ``a && b`` chains as recorded),
* nothing was tampered with (the grader's findings: a module shadowing the standard library,
  a test file changed during the check ...),
* every runner the plan expects reported, and every session ended properly, with no test
  reported twice,
* in every session, each verbatim copy passed and each falsified copy failed: a forgery that
  spares the controls while neutering the real tests cannot tell them apart,
* no real test failed or errored, at least one ran,
* and every test that passed on the reference passed again (vanished or skipped ones do not).

A check without a runner we instrument (a build, a linter, a script) is graded by its exit
status alone (``grading: exit_code``).

**Runners without controls** (``UNCONTROLLED``: ``cargo test``, whose per-test results are read
from libtest's own output, ``cargo_harness.py``): no control copies can be planned for them,
so the rule about copies does not apply to their sessions, and nothing in-process is a
tripwire: a test binary that prints a passing run and exits 0 is believed. What per-test
results still catch is a test that vanished, was skipped or failed, and output that does not
add up to libtest's own summary.

**Fractional rewards** (``reward="fraction"``: build and extend tasks, whose reward is the share
of their hidden tests that pass). The tests scored are the reference's own that failed at the
start (``start_failed``, fixed when the task was verified); the share is how many of them passed
again as often as on the reference, so a test deleted, skipped, renamed or never run counts as
failed and never leaves the denominator. A test that passed at the start as well (an existing
test of an extended project) must pass again, or the reward is 0. Anything that says the
results cannot be trusted still scores 0 outright: tampering findings, a runner that reported
wrongly or incompletely, a test reported twice, a run past its time limit, and control copies
that misbehaved. Since a partial solution fails some tests honestly, a verbatim copy must come
out as its real test did (both pass or both fail; ``control_problems(..., matching=True)``), and
a copy with an assertion made false must fail whenever its real test passed. A forgery that
turns failures into passes still cannot tell the copies from the real tests. With hidden
probes, a scored test whose calls gave a failed probe gets no credit, and a failed probe of
behaviour that worked at the start, or a probe run that matched nothing, scores 0. A scored test
whose calls no probe could follow (``score["probed"]`` counts those that had one) is credited on
the check alone, which is as far as a check-only task's reward goes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

UNITTEST = "unittest"
PYTEST = "pytest"
NODE_TEST = "node-test"
GO_TEST = "go-test"
CARGO_TEST = "cargo-test"
# Runner kinds the grader makes no control copies for (see the module docstring).
UNCONTROLLED = frozenset({CARGO_TEST})
# libtest options after `cargo test ... --` that change or hide its per-test lines: with them
# the check is graded by its exit status.
CARGO_UNREADABLE = ("-q", "--quiet", "--format", "-Z", "--nocapture", "--logfile", "--list")
PASSED = "passed"
FAILED = "failed"
ERROR = "error"
SKIPPED = "skipped"
_BAD = frozenset({FAILED, ERROR, "xpassed"})
MAX_SESSIONS = 64
MAX_CASES = 20000
_NAME_SPLIT = re.compile(r"::|\.| > ")


@dataclass(frozen=True)
class Judgement:
    reward: float
    reasons: tuple  # why not 1; empty when 1
    grading: str  # "structured" or "exit_code"
    passed: dict = field(default_factory=dict)  # real test id -> times passed
    detail: dict = field(default_factory=dict)
    failed: tuple = ()  # real test ids that failed or errored
    controls: dict = field(default_factory=dict)  # baseline: {"copyable": [...], "mutable": [...]}
    score: dict = field(default_factory=dict)  # fraction: {"scored", "passed", "kept", ...}


def copy_name(case_id, names):
    """The control copy a reported test id is, or None for a real test."""
    last = _NAME_SPLIT.split(case_id.split(" (", 1)[0])[-1]  # "(i=1)": a subtest of it
    return last if last in names else None


def split_cases(session):
    """(real cases, {copy name: [outcomes]}) of one session, in report order."""
    copies = session.get("copies") or {}
    real = []
    seen = {name: [] for name in copies}
    for case_id, outcome in session.get("cases") or ():
        name = copy_name(case_id, copies)
        if name is None:
            real.append((case_id, outcome))
        else:
            seen[name].append(outcome)
    return real, seen


def _kind(outcome):
    """An outcome's class for comparing a verbatim copy with its test: pass, bad or skipped."""
    return PASSED if outcome == PASSED else "bad" if outcome in _BAD else outcome


def control_problems(session, matching=False):
    """Why a session's control copies say its results cannot be trusted (empty: they behaved).

    ``matching`` (fractional rewards): a verbatim copy must come out as its real test did, and
    a falsified copy must fail only where its real test passed.
    """
    if session.get("baseline") or session.get("kind") in UNCONTROLLED:
        return []
    copies = session.get("copies") or {}
    real, seen = split_cases(session)
    if matching:
        return _matching_problems(copies, dict(real), seen)
    problems = []
    outcome_of = dict(real)
    if not any(c["fail"] for c in copies.values()) or not any(
        not c["fail"] for c in copies.values()
    ):
        problems.append("no control copies were planned for it (the grader could make none)")
    for name, control in sorted(copies.items()):
        outcomes = seen.get(name) or []
        if len(outcomes) != 1:
            problems.append(f"control copy {name} of {control['of']} ran {len(outcomes)} times")
        elif outcome_of.get(control["of"]) in _BAD and (outcomes[0] in _BAD or control["fail"]):
            # Its test fails (reward 0 already): the verbatim copy fails with it, and the
            # copy with an assertion made false may hold where the true one does not. A
            # failure, not a forgery (the no-op's case).
            continue
        elif control["fail"] and outcomes[0] != FAILED:
            problems.append(
                f"a copy of {control['of']} with an assertion made false was reported "
                f"{outcomes[0]}: results were forged in-process"
            )
        elif not control["fail"] and outcomes[0] != PASSED:
            problems.append(
                f"a verbatim copy of {control['of']} was reported {outcomes[0]}: the real "
                "test's result was forged (or the tests depend on their order)"
            )
    return problems


def _matching_problems(copies, real, seen):
    problems = []
    if not any(c["fail"] for c in copies.values()) or not any(
        not c["fail"] for c in copies.values()
    ):
        problems.append("no control copies were planned for it (the grader could make none)")
    for name, control in sorted(copies.items()):
        outcomes = seen.get(name) or []
        original = real.get(control["of"])
        if len(outcomes) != 1:
            problems.append(f"control copy {name} of {control['of']} ran {len(outcomes)} times")
        elif original is None:
            problems.append(f"{control['of']} did not run while its control copy did")
        elif control["fail"] and original == PASSED and outcomes[0] != FAILED:
            problems.append(
                f"a copy of {control['of']} with an assertion made false was reported "
                f"{outcomes[0]}: results were forged in-process"
            )
        elif not control["fail"] and _kind(outcomes[0]) != _kind(original):
            problems.append(
                f"a verbatim copy of {control['of']} was reported {outcomes[0]} where the test "
                f"itself was {original}: a result was forged (or the tests depend on their order)"
            )
    return problems


def runner_status(session, status):
    """The exit status the runner would have had without its control copies."""
    if not session or not session.get("complete") or session.get("problems"):
        return status or 1
    real, _ = split_cases(session)
    if control_problems(session) or any(outcome in _BAD for _, outcome in real):
        return status or 1
    return 0


def baseline_controls(sessions):
    """Tests whose verbatim copy passed (copyable) and whose falsified copy failed (mutable)."""
    copyable, mutable = set(), set()
    for session in sessions:
        _, seen = split_cases(session)
        for name, control in (session.get("copies") or {}).items():
            outcomes = seen.get(name) or []
            if control["fail"] and outcomes == [FAILED]:
                mutable.add(control["of"])
            elif not control["fail"] and outcomes == [PASSED]:
                copyable.add(control["of"])
    return {"copyable": sorted(copyable), "mutable": sorted(mutable & copyable)}


def cargo_per_test(args):
    """Whether ``cargo test ARGS`` prints libtest's line per test (the harness reads those):
    not quiet (Cargo's own ``-q`` makes the tests terse too), not with options after ``--``
    that change the format, interleave the tests' own output or only list them, and not
    ``--no-run``."""
    split = args.index("--") if "--" in args else len(args)
    before, after = args[:split], args[split + 1 :]
    if "--no-run" in before or any(a in ("-q", "--quiet") for a in before):
        return False
    return not any(a == o or a.startswith(o + "=") for a in after for o in CARGO_UNREADABLE)


def judge_sessions(
    exit_code,
    timed_out,
    seconds,
    sessions,
    structured,
    reference=None,
    findings=(),
    baseline=False,
    reward="all",
    start_failed=(),
    probes=None,
):
    """The reward of one graded run (see the module docstring for the rules).

    ``sessions``: the session records ``grade.py`` wrote; ``structured``: the runner kinds whose
    reports must appear; ``reference``: real test id -> times it passed on the reference;
    ``findings``: tampering the grader found around the check; ``baseline``: the check in the
    image, where the copies only tell which tests can serve as controls. ``reward``: "all"
    (1 or 0) or "fraction" (the share of ``start_failed`` tests that passed again), which
    applies once the reference is known (never in the check in the image). ``probes``: how the
    submission did on the task's hidden equivalence probes (``probing.check``), None for a
    check-only task: every probe must match, and for a fraction a scored test whose calls gave
    a failed probe gets no credit, while a failed probe of a test that passed at the start, or
    no probe matched at all, scores 0 (the share then rests on the check alone: a forgery).
    """
    sessions = list(sessions)[:MAX_SESSIONS]
    structured = frozenset(structured)
    fraction = reward == "fraction" and bool(reference) and not baseline
    reasons = list(findings)
    untrusted = bool(findings) or (fraction and timed_out)  # a fraction still scores 0
    passed = Counter()
    failed = []
    summary = []
    if timed_out:
        reasons.append(f"the check ran past its time limit ({seconds:.0f} s)")
    elif exit_code != 0:
        reasons.append(f"the check exited with status {exit_code}")
    for missing in sorted(structured - {s.get("kind") for s in sessions}):
        reasons.append(f"no {missing} results: the runner never reported (bypassed or killed)")
    for session in sessions:
        kind = session.get("kind", "unknown")
        real, _ = split_cases(session)
        problems = list(session.get("problems") or [])
        if not session.get("complete"):
            problems.append("its report ended before the runner finished (killed or forged?)")
        problems += control_problems(session, matching=fraction)
        counts = Counter(case_id for case_id, _ in real)
        twice = sorted(case_id for case_id, n in counts.items() if n > 1)
        if twice:
            problems.append(f"{len(twice)} test(s) reported more than once: {twice[0]}")
        untrusted = untrusted or bool(problems)
        bad = [case_id for case_id, outcome in real if outcome in _BAD]
        summary.append(
            {
                "kind": kind,
                "argv": list(session.get("argv") or ()),
                "tests": len(real),
                "failed": len(bad),
                "controls": len(session.get("copies") or {}),
                "problems": problems[:5],
            }
        )
        reasons += [f"{kind}: {problem}" for problem in problems[:3]]
        if not real:
            reasons.append(f"{kind}: no real test ran")
        if bad:
            reasons.append(f"{kind}: {len(bad)} test(s) did not pass: {', '.join(bad[:3])}")
        failed += bad
        passed.update(case_id for case_id, outcome in real if outcome == PASSED)
    controls = {}
    if baseline and structured - UNCONTROLLED:
        controls = baseline_controls(sessions)
        if not controls["mutable"]:
            reasons.append(
                "no control could be made from the check's tests (none has an assertion the "
                "grader can copy and make false)"
            )
    blocked = ()
    if probes is not None:
        if probes.get("error"):
            untrusted = True
            reasons.append(f"the equivalence probes could not run: {probes['error']}")
        elif probes.get("failed"):
            reasons.append(
                f"{len(probes['failed'])} of {probes.get('probes', 0)} hidden equivalence "
                "probe(s) disagree with the reference"
            )
            blocked = tuple(str(t) for t in probes.get("failed_tests") or ())
            if probes.get("unlinked"):  # a failed probe no test is known for: none gets credit
                blocked += tuple(start_failed)
            kept = set(reference or ()) - set(start_failed)
            if fraction and (kept & set(blocked) or not probes.get("matched")):
                # A probe of what already worked at the start now disagrees (as a kept test
                # failing would), or the probe process matched nothing at all (its report was
                # not the code's): no test's credit stands on the check alone.
                untrusted = True
                reasons.append(
                    "a hidden probe of behaviour that already worked at the start disagrees"
                    if kept & set(blocked)
                    else "no hidden probe matched the reference"
                )
    score = {}
    if reference:
        short = sorted(k for k, n in reference.items() if passed[k] < n)
        if short:
            shown = ", ".join(short[:3])
            reasons.append(f"{len(short)} test(s) that pass on the reference did not: {shown}")
    if fraction:
        linked = (probes or {}).get("linked")
        score = fraction_score(reference, passed, start_failed, blocked, linked)
        if score["kept_failed"]:
            reasons.append(
                f"{score['kept_failed']} test(s) that passed at the start no longer pass: reward 0"
            )
        if untrusted:
            value = 0.0
        elif score["kept_failed"] or not score["scored"]:
            value = 0.0
        else:
            value = score["passed"] / score["scored"]
    else:
        value = 0.0 if reasons else 1.0
    if not (untrusted or baseline) and start_failed and set(failed) == set(start_failed):
        # The no-op's case: say what happened, not only the failures it shows.
        reasons.insert(0, "no change: the recorded check failed as at the start")
    return Judgement(
        reward=value,
        reasons=tuple(reasons),
        grading="structured" if structured else "exit_code",
        passed=dict(passed),
        detail={"runners": summary, "exit_code": exit_code, "timed_out": timed_out},
        failed=tuple(dict.fromkeys(failed)),
        controls=controls,
        score=score,
    )


def fraction_score(reference, passed, start_failed, blocked=(), linked=None):
    """The share of a fractional task's scored tests that passed again, and its parts; a test
    ``blocked`` by a failed probe (its id is among the tests that made the probe's call, as
    the tracer saw them) gets no credit. ``linked``: the tests any probe came from ("probed":
    how many scored tests had one; None for a check-only task)."""
    scored = sorted(set(start_failed) & set(reference))
    kept = sorted(set(reference) - set(scored))
    blocked = frozenset(blocked)
    done = [k for k in scored if passed[k] >= reference[k] and k not in blocked]
    return {
        "mode": "fraction",
        "scored": len(scored),
        "probed": None if linked is None else len(set(scored) & set(linked)),
        "passed": len(done),
        "kept": len(kept),
        "kept_failed": sum(1 for k in kept if passed[k] < reference[k]),
        "missed": [k for k in scored if k not in done][:20],
    }
