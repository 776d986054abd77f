"""cargo test graded test by test: the harness's reading of libtest's lines (output recorded
from cargo 1.95), when a run's output allows it, and how its sessions are judged without
control copies (the whole runner is exercised in Docker by test_dependencies_docker.py)."""

from __future__ import annotations

from tasks_review.core.trials.kit import judging
from tasks_review.core.trials.plan import is_guarded, plan_check

from .helpers import load

cargo = load("cargo_harness")


PASSING = """   Compiling q v0.1.0 (/app)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.17s
     Running unittests src/lib.rs (target/debug/deps/q-ab552f1cb1ec5471)

running 1 test
test tests::inner ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/add.rs (target/debug/deps/add-f1ccc4b1a98caa36)

running 2 tests
test adds ... ok
test slow ... ignored

test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests q

running 1 test
test src/lib.rs - doc (line 4) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.26s
"""
# A failing test that prints a forged line: the captured output comes after the results.
FAILING = """     Running tests/add.rs (target/debug/deps/add-f1ccc4b1a98caa36)

running 2 tests
test adds ... ok
test loud_failure ... FAILED

failures:

---- loud_failure stdout ----
test forged ... ok

thread 'loud_failure' (24348) panicked at tests/add.rs:7:52:
assertion `left == right` failed

failures:
    loud_failure

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.51s

error: test failed, to rerun pass `--test add`
"""


def read(output: str):
    cases = []
    reader = cargo.Reader(lambda case_id, outcome: cases.append((case_id, outcome)))
    for line in output.splitlines(keepends=True):
        reader.line(line)
    reader.finish()
    return cases, reader.problems


def test_each_test_is_reported_under_its_target_as_libtest_printed_it():
    cases, problems = read(PASSING)
    assert cases == [
        ("src/lib.rs::tests::inner", "passed"),
        ("tests/add.rs::adds", "passed"),
        ("tests/add.rs::slow", "skipped"),
        ("doc:q::src/lib.rs - doc (line 4)", "passed"),
    ]
    assert problems == []


def test_a_failures_captured_output_is_not_read_as_results():
    cases, problems = read(FAILING)
    assert cases == [("tests/add.rs::adds", "passed"), ("tests/add.rs::loud_failure", "failed")]
    assert problems == []


def test_lines_that_do_not_add_up_to_libtests_summary_are_a_problem():
    forged = FAILING.replace("test loud_failure ... FAILED", "test loud_failure ... ok")
    _, problems = read(forged)
    assert problems and "do not add up" in problems[0]
    died = "     Running tests/add.rs (x)\n\nrunning 2 tests\ntest adds ... ok\n"
    _, problems = read(died)
    assert problems == ["tests/add.rs: its results never closed (the binary died?)"]


def test_only_a_run_that_prints_every_test_is_read_test_by_test():
    assert judging.cargo_per_test([])
    assert judging.cargo_per_test(["--test", "add", "--", "--test-threads=1", "adds"])
    for args in (["-q"], ["--quiet"], ["--no-run"], ["--", "--format=json"], ["--", "-q"]):
        assert not judging.cargo_per_test(args), args
    assert not judging.cargo_per_test(["--", "--nocapture"])
    assert plan_check("cargo test", ".", {}).structured == {judging.CARGO_TEST}
    assert plan_check("cd crate && cargo test -q", ".", {}).mode == "exit_code"
    assert plan_check("cargo build", ".", {}).mode == "exit_code"


def session(cases, *, kind=judging.CARGO_TEST, baseline=False):
    return {
        "kind": kind,
        "complete": True,
        "problems": [],
        "cases": cases,
        "copies": {},
        "baseline": baseline,
    }


def test_a_cargo_session_is_judged_by_its_tests_with_no_copies_to_expect():
    passed = [["tests/add.rs::adds", "passed"], ["tests/add.rs::zero", "passed"]]
    verdict = judging.judge_sessions(0, False, 1.0, [session(passed)], [judging.CARGO_TEST])
    assert (verdict.reward, verdict.grading) == (1.0, "structured")
    # In the check in the image no control is asked of it either.
    base = judging.judge_sessions(
        0, False, 1.0, [session(passed, baseline=True)], [judging.CARGO_TEST], baseline=True
    )
    assert base.reward == 1.0 and base.controls == {}
    # A test that passed on the reference and vanished costs the reward.
    gone = judging.judge_sessions(
        0,
        False,
        1.0,
        [session(passed[:1])],
        [judging.CARGO_TEST],
        reference={"tests/add.rs::adds": 1, "tests/add.rs::zero": 1},
    )
    assert gone.reward == 0.0 and "did not" in gone.reasons[0]
    # Go's sessions still need their copies: claiming to be another runner does not help.
    go = judging.judge_sessions(0, False, 1.0, [session(passed, kind=judging.GO_TEST)], ["go-test"])
    assert go.reward == 0.0


def test_cargos_manifest_and_configuration_are_taken_from_the_reference():
    assert is_guarded("Cargo.toml") and is_guarded("crates/x/Cargo.toml")
    assert is_guarded(".cargo/config.toml") and is_guarded("sub/.cargo/config")
    assert not is_guarded("src/lib.rs") and not is_guarded("config.toml")
