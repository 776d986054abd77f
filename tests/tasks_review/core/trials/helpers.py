"""What the trial tests share: small handmade tasks (Python, Node, a hackable check, pytest with
dated dependencies), writing them as Harbor tasks, and grading a submission as Harbor does."""

from __future__ import annotations

import dataclasses
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from groundwork.core.docker import Engine, FileEntry, InfraError
from groundwork.core.docker import docker_labels as lbl
from tasks_review.core.mining import RepairCandidate, candidate_key, find_repair_candidates
from tasks_review.core.mining.files import is_test_config, is_test_file
from tasks_review.core.taskfiles import SourceTrace, write_task
from tasks_review.core.trials import CATALOGUE, Control, MatrixStatus, Role, TrialStatus
from tasks_review.core.trials.image import PreparedTask
from tasks_review.core.trials.runner import act
from tasks_review.core.trials.taskdir import TaskSpec
from tasks_review.core.trials.trial import MinedTrial
from tasks_review.core.trials.verifier import (
    VERIFIER_DIR,
    Graded,
    Submission,
    copy_results,
    grade_submission,
    grading_files,
    judge_results,
)
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats import load
from trajectories.core.replay import StateIndex, replay

REPO = Path(__file__).resolve().parents[4]
SHA = "0f" * 32
FAKE_BASE = "127.0.0.1:5000/traj2env/base@sha256:" + "ab" * 32

PYTHON_START = {
    "calc/__init__.py": b"from .ops import add, mul\n",
    "calc/ops.py": b"def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    "tests/test_ops.py": b"""import unittest

from calc import add, mul


class OpsTests(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)

    def test_mul_by_zero(self):
        self.assertEqual(mul(7, 0), 0)
""",
}
PYTHON_FIX = {
    "calc/ops.py": b"def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
}


NODE_START = {
    "package.json": b'{\n  "name": "units",\n  "version": "1.0.0",\n'
    b'  "scripts": {\n    "test": "node --test"\n  }\n}\n',
    "src/units.js": b"'use strict';\n\nfunction toKiB(bytes) {\n  return bytes / 1000;\n}\n\n"
    b"module.exports = { toKiB };\n",
    "test/units.test.js": b"""'use strict';

const { describe, test } = require('node:test');
const assert = require('node:assert');
const { toKiB } = require('../src/units');

describe('toKiB', () => {
  test('zero is zero', () => {
    assert.strictEqual(toKiB(0), 0);
  });
  test('1024 bytes are one KiB', () => {
    assert.strictEqual(toKiB(1024), 1);
  });
});
""",
}
NODE_FIX = {
    "src/units.js": b"'use strict';\n\nfunction toKiB(bytes) {\n  return bytes / 1024;\n}\n\n"
    b"module.exports = { toKiB };\n"
}

# A check that any file at the right path satisfies: the controls must expose it.
HACKABLE_START = {
    "report.py": b"import pathlib\n\npathlib.Path('build').mkdir(exist_ok=True)\n"
    b"pathlib.Path('build/report.txt').write_text('total: 42\\n')\n",
}
HACKABLE_FIX = {"build/report.txt": b"total: 42\n"}


# A pytest project that declares pytest (a date-pinned range) in requirements-dev.txt: the
# image installs it from the task's own wheels, resolved as PyPI was on the trajectory's date.
PYTEST_START = {
    "requirements-dev.txt": b"pytest>=8,<9\n",
    "shop/__init__.py": b"",
    "shop/cart.py": b"def total(prices):\n    return sum(prices[1:])\n",
    "tests/test_cart.py": b"""from shop.cart import total


def test_total():
    assert total([1, 2, 3]) == 6


def test_empty():
    assert total([]) == 0
""",
}
PYTEST_FIX = {"shop/cart.py": b"def total(prices):\n    return sum(prices)\n"}
TRAJECTORY_DATE = datetime(2025, 6, 1, tzinfo=UTC)

SLOW = Control(name="slow_agent", description="an agent that takes its time", shell="sleep 60")


DISAGREE = "the task's grader wrote reward"


def handmade(
    blobs: MemoryBlobs,
    start: dict[str, bytes],
    fix: dict[str, bytes],
    *,
    command: str,
    language: str,
    runner: str,
    services: tuple[str, ...] = (),
) -> RepairCandidate:
    ref = {**start, **fix}
    start_files = {path: blobs.put(data) for path, data in start.items()}
    ref_files = {path: blobs.put(data) for path, data in ref.items()}
    paths = {*start_files, *ref_files}
    return RepairCandidate(
        command=command,
        task_command=command,
        cwd=".",
        check_cwd=".",
        language=language,
        runner=runner,
        check_kind="test",
        root="/work/proj",
        project_dir="/app",
        fail_command_index=0,
        pass_command_index=1,
        fail_step_index=2,
        pass_step_index=4,
        fail_step_id=3,
        pass_step_id=5,
        fail_exit_code=1,
        failing_output="1 failed",
        start_files=start_files,
        ref_files=ref_files,
        added=tuple(sorted(p for p in ref_files if p not in start_files)),
        modified=tuple(
            sorted(p for p in ref_files if p in start_files and start_files[p] != ref_files[p])
        ),
        deleted=(),
        test_paths=tuple(sorted(p for p in paths if is_test_file(p) or is_test_config(p))),
        fix_edits_tests=False,
        unknown_paths=(),
        instruction=f"# Make the failing check pass\n\nRun `{command}`; it fails.\n",
        key=candidate_key(command, ".", start_files, ref_files),
        services=services,
    )


def write(dest: Path, base: str, start, fix, python_packages=None, **check) -> Path:
    blobs = MemoryBlobs()
    candidate = handmade(blobs, start, fix, **check)
    return write_task(
        dest,
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate(SHA, candidate),
        source_model="test-model",
        base_image=base,
        check_timeout=120,
        overwrite=True,
        python_packages=python_packages,
    )


def with_check(spec: TaskSpec, command: str) -> TaskSpec:
    """``spec`` with another recorded check, in task.toml's place and in the task's grader."""
    config = json.loads(spec.tests_files["grading.json"].data)
    config.update(command=command, structured=[], reference={})
    tests = {**spec.tests_files, "grading.json": FileEntry(json.dumps(config).encode())}
    return dataclasses.replace(spec, command=command, tests_files=tests)


SAMPLES = REPO / "samples"


def sample_task(fmt: str, out: Path, base: str) -> Path:
    """The bundled sample of ``fmt`` mined and written as a task under ``out``."""
    sample = next((SAMPLES / fmt).glob("*.json*"))
    loaded = load(sample)
    blobs = MemoryBlobs()
    result = replay(loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs)
    [candidate], _ = find_repair_candidates(result, StateIndex.build(result), blobs, loaded.atif)
    return write_task(
        out / fmt,
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate("0" * 64, candidate),
        source_model=None,
        base_image=base,
        task_name=f"test/{fmt}",
    )


def separately(engine, task: PreparedTask, baseline, files: dict[str, str]) -> Graded:
    """The starting files with ``files`` written over them, graded by the separate verifier
    (no agent container: the submission is those bytes)."""
    submitted = {**task.spec.start_files, **{p: FileEntry(t.encode()) for p, t in files.items()}}
    return grade_submission(
        engine,
        task.spec,
        task.image.image_id,
        Submission(files=submitted),
        facts=baseline.facts,
        plan=baseline.plan,
        run_id=new_run_id(),
        limits=task.limits,
    )


def rewards(graded: Graded) -> tuple[float | None, float]:
    """(the reward without the probes, verifier v2's: the check and its tripwires alone, and
    the reward with them) of one graded run."""
    return graded.detail["reward_without_probes"], graded.verdict.reward


def new_run_id() -> str:
    return f"test-trials-{uuid.uuid4().hex[:10]}"


def left_behind(engine: Engine, run_id: str) -> list[str]:
    return [c.name for c in engine.containers(label=f"{lbl.RUN}={run_id}")]


def assert_full_matrix(result, language: str, *, graded_controls: int = 10) -> None:
    assert result.status is MatrixStatus.KEPT, result.reasons
    oracle = result.of("oracle")
    assert [t.repeat for t in oracle] == [0, 1, 2]
    assert all(t.reward == 1.0 and t.status is TrialStatus.GRADED for t in oracle)
    (noop,) = result.of("noop")
    assert (noop.reward, noop.status) == (0.0, TrialStatus.GRADED)
    controls = [t for t in result.trials if t.role is Role.CONTROL]
    assert [t.name for t in controls] == [c.name for c in CATALOGUE]  # each one, once
    for t in controls:
        if t.status is TrialStatus.SKIPPED:
            assert t.detail["skip_reason"] and t.reward is None
        else:
            assert (t.reward, t.status) == (0.0, TrialStatus.GRADED), (t.name, t.detail)
    assert sum(t.status is TrialStatus.GRADED for t in controls) >= graded_controls
    for t in result.trials:
        if t.status is TrialStatus.GRADED:
            assert t.finished >= t.started and t.seconds > 0 and t.logs
            assert t.detail["grading"] == "structured"
    json.dumps(result.to_dict())  # the record the web pages and report.json store


def harbor_style(
    engine, task: PreparedTask, baseline, *, role, control=None, run_id, with_git=False
) -> Graded:
    """Harbor's way: the agent's whole project crosses (installed dependencies and all, and
    its ``.git`` when ``with_git``, as Harbor's own upload carries it), then tests/test.sh
    grades it in a fresh container of the task's image."""
    spec = task.spec
    mined = MinedTrial(task, baseline)
    with engine.sandbox(task.image.image_id, run_id=run_id, limits=task.limits) as box:
        act(box, mined, role=role, control=control, logs=[], detail={})
        if box.alive:
            box.stop()
        whole = box.copy_out(spec.project_dir, max_entries=50_000)
    files = {p: e for p, e in whole.files.items() if with_git or not p.startswith(".git/")}
    return grade_submission(
        engine,
        spec,
        task.image.image_id,
        Submission(files=files),
        facts=baseline.facts,
        plan=baseline.plan,
        run_id=run_id,
        limits=task.limits,
    )


# A Go module with no dependencies: `go test ./...` offline, in the Go base image.
GO_START = {
    "go.mod": b"module example.com/calc\n\ngo 1.22\n",
    "calc/calc.go": b"""package calc

// Add returns a + b.
func Add(a, b int) int { return a + b }

// Mul returns a * b.
func Mul(a, b int) int { return a + b }
""",
    "calc/calc_test.go": b"""package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestMul(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{2, 3, 6}, {4, 5, 20}} {
		t.Run("case", func(t *testing.T) {
			if got := Mul(c.a, c.b); got != c.want {
				t.Errorf("Mul(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestMulByZero(t *testing.T) {
	if got := Mul(7, 0); got != 0 {
		t.Errorf("Mul(7, 0) = %d, want 0", got)
	}
}
""",
}
GO_FIX = {
    "calc/calc.go": b"""package calc

// Add returns a + b.
func Add(a, b int) int { return a + b }

// Mul returns a * b.
func Mul(a, b int) int { return a * b }
"""
}


# A pytest project whose code talks to Redis (RESP over a plain socket): its check fails without
# a Redis on 127.0.0.1:6379, and the recorded command flushes it first with redis-cli.
REDIS_START = {
    "requirements-dev.txt": b"pytest>=8,<9\n",
    "counter/__init__.py": b"",
    "counter/store.py": b"""import socket


def command(*args):
    \"\"\"One Redis command, its reply as text.\"\"\"
    words = [str(a).encode() for a in args]
    payload = b"*%d\\r\\n" % len(words)
    payload += b"".join(b"$%d\\r\\n%s\\r\\n" % (len(w), w) for w in words)
    with socket.create_connection(("127.0.0.1", 6379), timeout=5) as conn:
        conn.sendall(payload)
        return conn.recv(65536).decode()


def visit(page):
    \"\"\"Count a visit of ``page``; the number of visits so far.\"\"\"
    return int(command("INCRBY", f"visits:{page}", 2)[1:])
""",
    "tests/test_store.py": b"""from counter.store import command, visit


def test_a_first_visit_counts_one():
    command("DEL", "visits:home")
    assert visit("home") == 1


def test_visits_add_up():
    command("DEL", "visits:about")
    visit("about")
    assert visit("about") == 2
""",
}
REDIS_FIX = {
    "counter/store.py": REDIS_START["counter/store.py"].replace(b'", 2)[1:]', b'", 1)[1:]')
}


@dataclass(frozen=True)
class InPlace:
    """What Harbor would read after grading in the agent's own container, the harness's own
    verdict on what the grader left there (``judged``: with the probes, and its
    ``detail["reward_without_probes"]``), and what ``after`` printed (run as root then)."""

    reward: float | None
    logs: str
    judged: Graded | None = None
    after: str = ""


def graded_in_place(
    engine, task: PreparedTask, baseline, *, control, run_id, after: str = ""
) -> InPlace:
    """Same-container grading, as Harbor's stock environment does it: the agent acts (its
    processes may keep running), then ``/tests`` is uploaded and ``bash /tests/test.sh`` runs
    as root in that very container, found on the image's PATH; the reward is read as Harbor
    reads it, ``reward.json`` first, following links."""
    spec = task.spec
    mined = MinedTrial(task, baseline)
    tests = grading_files(spec, baseline.facts)
    with engine.sandbox(task.image.image_id, run_id=run_id, limits=task.limits) as box:
        # Harbor makes the verifier's folder world-writable in the environments it starts.
        box.exec(
            ["/bin/sh", "-c", "mkdir -p /logs/verifier && chmod 777 /logs/verifier"], user="root"
        )
        act(box, mined, role=Role.CONTROL, control=control, logs=[], detail={})
        box.put_files("/", {f"tests/{n}": e for n, e in tests.items()}, owner=(0, 0))
        ran = box.exec(["bash", "/tests/test.sh"], user="root", timeout=spec.check_timeout + 120)
        reward = None
        for name in ("reward.json", "reward.txt"):
            read = box.exec(["/bin/cat", f"/logs/verifier/{name}"], user="root", timeout=30)
            if read.exit_code == 0 and read.stdout.strip():
                try:
                    value = json.loads(read.stdout)
                    reward = float(value["reward"] if isinstance(value, dict) else value)
                except (ValueError, KeyError, TypeError):
                    reward = None
                break
        shown = box.exec(["/bin/sh", "-c", after], user="root", timeout=60).stdout if after else ""
        copied = copy_results(box, VERIFIER_DIR)
    logs = ran.stdout[-3000:] + ran.stderr[-2000:]
    try:
        judged = judge_results(
            copied, logs, tests, Submission(), facts=baseline.facts, plan=baseline.plan
        )
    except InfraError:
        judged = None
    return InPlace(reward, logs, judged, shown)
