"""Shapes of real sessions, each kept end to end: ``generate`` over small synthetic sessions that
mirror them, verified in Docker.

- a pytest check that fails bare and passes behind ``redis-cli FLUSHDB && pytest -q``: the task's
  check keeps the prefix and runs against a Redis its image starts;
- one session recorded three ways, as a Harbor run folder holds it: Claude Code's stream-json
  stdout with a crash's stack trace printed inside, the session JSONL and the ATIF
  ``trajectory.json``: one trajectory with three sources, one task;
- a Go module that needs no downloads, on the Go base image.

(The fourth shape, a clone-backed session whose fix touches a file the log never showed, is
``test_verify_docker.test_a_clone_backed_session_whose_fix_touches_an_unseen_file_is_kept``.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks_review.models import Candidate, PipelineRun, TrialRun
from tasks_review.services.images import base_image_ref
from tests.claude_code_log import Log
from tests.tasks_review.core.trials.helpers import GO_FIX, GO_START, REDIS_FIX, REDIS_START
from tests.tasks_review.kept import assert_kept, generate_over
from trajectories.core import formats
from trajectories.models import IngestIssue, Trajectory

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REDIS_CWD, TWIN_CWD, GO_CWD = "/home/dev/visits", "/app", "/home/dev/calc"
TWIN_SESSION = "7d1e0c52-3b8a-4f0e-9a51-2f7c5e0d9b14"
STACK_TRACE = [
    "node:internal/process/promises:391",
    "    triggerUncaughtException(err, true /* fromPromise */);",
    "Error: write EPIPE",
    "    at afterWriteDispatched (node:internal/stream_base_commons:161:15)",
]
WORDS = "def count(text):\n    return len(text.split(' '))\n"
WORDS_FIXED = "def count(text):\n    return len(text.split())\n"
WORDS_TEST = (
    "import unittest\n\nfrom words import count\n\n\n"
    "class CountTests(unittest.TestCase):\n"
    "    def test_single_spaces(self):\n        self.assertEqual(count('a b c'), 3)\n\n"
    "    def test_runs_of_space(self):\n        self.assertEqual(count('a  b\\n c'), 3)\n\n"
    "    def test_empty(self):\n        self.assertEqual(count(''), 0)\n"
)
UNITTEST_FAIL = (
    "test_empty (test_words.CountTests.test_empty) ... FAIL\n"
    "test_runs_of_space (test_words.CountTests.test_runs_of_space) ... FAIL\n"
    "test_single_spaces (test_words.CountTests.test_single_spaces) ... ok\n\n"
    "FAIL: test_empty (test_words.CountTests.test_empty)\nAssertionError: 1 != 0\n\n"
    "Ran 3 tests in 0.001s\n\nFAILED (failures=2)"
)
UNITTEST_PASS = (
    "test_empty (test_words.CountTests.test_empty) ... ok\n"
    "test_runs_of_space (test_words.CountTests.test_runs_of_space) ... ok\n"
    "test_single_spaces (test_words.CountTests.test_single_spaces) ... ok\n\n"
    "Ran 3 tests in 0.001s\n\nOK"
)


def _files(log: Log, files: dict[str, bytes], prefix: str) -> Log:
    for n, (rel, content) in enumerate(files.items()):
        log.write(f"{prefix}w{n}", rel, content.decode())
    return log


def _fix(log: Log, prefix: str, start: dict[str, bytes], fix: dict[str, bytes]) -> Log:
    for n, (rel, content) in enumerate(fix.items()):
        old, new = start[rel].decode(), content.decode()
        head = next(i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b)
        line_start = old.rfind("\n", 0, head) + 1
        old_line = old[line_start : old.index("\n", head)]
        new_line = new[line_start : new.index("\n", head)]
        log.edit(f"{prefix}e{n}", rel, old_line, new_line)
    return log


def redis_session(folder: Path) -> Path:
    """pytest fails bare (a counter counts twice), the fix, then the check behind the flush."""
    log = Log(session_id="0b7f9e43-5c1d-4a8e-b2f6-93d4e1c0a7d5", cwd=REDIS_CWD)
    log.user("The visit counter tests fail against my local Redis. Fix the counter.")
    # conftest.py at the root puts it on pytest's path, so `pytest -q` imports the package
    _files(log, {**REDIS_START, "conftest.py": b"# the project's root, for pytest\n"}, "r")
    log.bash(
        "r1",
        "pytest -q",
        "F.                                                                       [100%]\n"
        "    def test_a_first_visit_counts_one():\n"
        '        command("DEL", "visits:home")\n>       assert visit("home") == 1\n'
        "E       AssertionError: assert 2 == 1\n"
        "tests/test_store.py:6: AssertionError\n1 failed, 1 passed in 0.04s",
        exit_code=1,
    )
    _fix(log, "r", REDIS_START, REDIS_FIX)
    log.bash("r2", "redis-cli FLUSHDB && pytest -q", "OK\n..   [100%]\n2 passed in 0.03s")
    log.say("Visits now count one each; the tests pass.")
    return log.save(folder / "redis" / f"{log.session_id}.jsonl")


def twin_recordings(folder: Path) -> Path:
    """One session as a Harbor run folder records it: stream-json stdout (with a crash's stack
    trace printed between two events), the session JSONL, and the ATIF made of it."""
    log = Log(session_id=TWIN_SESSION, cwd=TWIN_CWD)
    log.user("count() miscounts words separated by several spaces. Fix it.")
    log.write("t1", "words.py", WORDS).write("t2", "test_words.py", WORDS_TEST)
    command = "python3 -m unittest -v"
    log.bash("t3", command, UNITTEST_FAIL, exit_code=1)
    log.edit("t4", "words.py", "text.split(' ')", "text.split()")
    log.bash("t5", command, UNITTEST_PASS)
    log.say("count() splits on any white space now.")
    agent = folder / "harbor" / "words__Tw1n5" / "agent"
    agent.mkdir(parents=True)
    (agent / "claude-code.txt").write_text(log.stream_json(foreign={4: STACK_TRACE}))
    session = log.save(agent / "sessions" / "projects" / "-app" / f"{TWIN_SESSION}.jsonl")
    (agent / "trajectory.json").write_text(json.dumps(formats.load(session).atif, indent=2))
    return agent


def go_session(folder: Path) -> Path:
    log = Log(session_id="5e2c8a17-9d40-4b6f-8e13-0a7c6d2f4b98", cwd=GO_CWD)
    log.user("Mul is wrong, the tests say so. Fix it.")
    _files(log, GO_START, "g")
    log.bash(
        "g1",
        "go test ./...",
        "--- FAIL: TestMul (0.00s)\n    --- FAIL: TestMul/case (0.00s)\n"
        "        calc_test.go:15: Mul(2, 3) = 5, want 6\n--- FAIL: TestMulByZero (0.00s)\n"
        "FAIL\nFAIL\texample.com/calc/calc\t0.002s\nFAIL",
        exit_code=1,
    )
    _fix(log, "g", GO_START, GO_FIX)
    log.bash("g2", "go test ./...", "ok  \texample.com/calc/calc\t0.002s")
    return log.save(folder / "go" / f"{log.session_id}.jsonl")


@pytest.fixture
def generated(docker_engine, tmp_path, unique_run_ids) -> dict[str, Candidate]:
    """``generate`` over the three stories at once: their candidates by project."""
    sessions = tmp_path / "sessions"
    redis_session(sessions)
    twin_recordings(sessions)
    go_session(sessions)
    candidates = generate_over(sessions, tmp_path)
    outcomes = {cwd: (c.status, c.drop_reason, c.drop_detail) for cwd, c in candidates.items()}
    assert all(c.status == Candidate.Status.KEPT for c in candidates.values()), outcomes
    return candidates


def test_the_three_shapes_are_each_kept_end_to_end(generated):
    assert set(generated) == {REDIS_CWD, TWIN_CWD, GO_CWD}
    run = PipelineRun.objects.get()
    assert run.counts["kept"] == 3 and run.counts["ungraded"] == 0

    # Redis: the prefix the session ran the check behind is the task's check, with its service
    redis = generated[REDIS_CWD]
    assert_kept(redis)
    assert redis.payload["task_command"] == "redis-cli FLUSHDB && pytest -q"
    assert (redis.payload["services"], redis.payload["setup"]) == (["redis"], ["redis-cli FLUSHDB"])
    grading = json.loads((Path(redis.task_dir) / "tests" / "grading.json").read_text())
    assert grading["services"] == ["redis"]
    dockerfile = (Path(redis.task_dir) / "environment" / "Dockerfile").read_text()
    assert f"\nFROM {base_image_ref(['services'])}\n" in dockerfile, dockerfile

    # Go: on the Go variant of the base image, graded test by test
    go = generated[GO_CWD]
    assert_kept(go)
    assert (go.language, go.runner, go.payload["task_command"]) == ("go", "go", "go test ./...")
    dockerfile = (Path(go.task_dir) / "environment" / "Dockerfile").read_text()
    assert f"\nFROM {base_image_ref(['go'])}\n" in dockerfile, dockerfile
    oracle = TrialRun.objects.filter(candidate=go, role="oracle").first()
    assert [r["kind"] for r in oracle.detail["check"]["runners"]] == ["go-test"]

    # One session, three recordings: one trajectory, every source in the task's provenance
    twin = generated[TWIN_CWD]
    toml = assert_kept(twin)
    [trajectory] = Trajectory.objects.filter(session_id=TWIN_SESSION)
    names = {s.path.rsplit("/", 1)[-1] for s in trajectory.sources}
    assert names == {"claude-code.txt", f"{TWIN_SESSION}.jsonl", "trajectory.json"}
    assert trajectory.source.path.endswith("claude-code.txt")  # the file read first made it
    others = {s.sha256 for s in trajectory.sources} - {trajectory.source.sha256}
    assert set(toml["metadata"]["repo2env"]["source_trace"]["twins"]) == others
    # The stack trace's lines are warnings on the ingest run; the file was not failed.
    warnings = IngestIssue.objects.filter(kind="warning", path__endswith="claude-code.txt")
    assert warnings.count() == len(STACK_TRACE)
    assert not IngestIssue.objects.filter(kind="failed").exists()
