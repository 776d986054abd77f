"""Making the hidden probes at keep time, without Docker: the tracers in real Python and Node
processes, inputs derived from what they saw, and the choice of probes."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from groundwork.core.docker import FileEntry, InfraError
from tasks_review.core.trials.baseline import stored_probes
from tasks_review.core.trials.probeinputs import derive
from tasks_review.core.trials.probes import read_traces, select
from tasks_review.core.trials.probeset import ProbeSet, read_probes, record_probes
from tasks_review.core.trials.taskdir import TaskSpec, read_task

PROBEKIT = Path(__file__).resolve().parents[4] / "tasks_review" / "core" / "trials" / "probekit"
KIT = PROBEKIT.parent / "kit"


def lay(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def traced(root: Path, argv: list[str]) -> list[dict]:
    kit = root.parent / "probekit"
    kit.mkdir()
    shutil.copy(PROBEKIT / "sitecustomize.py", kit)
    shutil.copy(KIT / "probe_values.py", kit)
    out = root.parent / "trace"
    env = {
        **os.environ,
        "PYTHONPATH": str(kit),
        "NODE_OPTIONS": f"--require={PROBEKIT / 'trace.cjs'}",
        "TRAJ2ENV_TRACE_OUT": str(out),
        "TRAJ2ENV_TRACE_PROJECT": str(root),
    }
    ran = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    files = {p.name: FileEntry(p.read_bytes()) for p in out.iterdir()}
    return read_traces(files, str(root))


PYTHON_PROJECT = {
    "calc/__init__.py": "from .ops import mul\n",
    "calc/ops.py": "def mul(a, b):\n    return _times(a, b)\n\n\n"
    "def _times(a, b):\n    return a * b\n\n\n"
    "class Box:\n    def get(self, x):\n        return x\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": "import unittest\nfrom calc import mul\nfrom calc.ops import Box\n\n\n"
    "class T(unittest.TestCase):\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"
    "        self.assertEqual(mul(b=4, a=2), 8)\n        Box().get(object())\n",
}


def test_the_python_tracer_records_the_tests_calls_into_project_functions(tmp_path):
    root = tmp_path / "app"
    lay(root, PYTHON_PROJECT)
    language, paths, workdir, calls = traced(root, [sys.executable, "-m", "unittest", "-q"])
    assert (language, paths, workdir) == ("python", (".",), ".")
    # mul as the test called it, twice; not _times (called by mul, not by a test), not the
    # method, nothing of the standard library.
    assert sorted((c["function"], c["args"]) for c in calls) == [("mul", [2, 3]), ("mul", [2, 4])]
    # Each call with the id unittest gives the test that made it, as the grader's reports do.
    assert [c["tests"] for c in calls] == [["tests.test_ops.T.test_mul"]] * 2


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_node_tracer_records_calls_from_test_files_to_commonjs_exports(tmp_path):
    root = tmp_path / "app"
    lay(
        root,
        {
            "package.json": '{"name": "u", "version": "1.0.0"}\n',
            "src/units.js": "const half = (x) => x / 2;\n"
            "module.exports = { toKiB: (b) => half(b * 2) / 1024, version: 1 };\n",
            "test/units.test.js": "const { describe, test } = require('node:test');\n"
            "const assert = require('node:assert');\nconst { toKiB } = require('../src/units');\n"
            "test('k', () => { assert.strictEqual(toKiB(2048), 2); toKiB({ a: [1] }); });\n"
            "describe('units', () => {\n"
            "  test('again', async () => { await null; assert.strictEqual(toKiB(2048), 2); });\n"
            "});\n",
        },
    )
    language, _paths, _workdir, calls = traced(root, ["node", "--test"])
    assert language == "node"
    assert sorted(json.dumps(c["args"]) for c in calls) == ["[2048]", '[{"a": [1]}]']
    assert {(c["module"], c["function"]) for c in calls} == {("src/units.js", "toKiB")}
    # The ids the grader's reports give the tests that made each call (an await between).
    test = root / "test" / "units.test.js"
    by_args = {json.dumps(c["args"]): c["tests"] for c in calls}
    assert by_args == {
        "[2048]": [f"{test} > k", f"{test} > units > again"],
        '[{"a": [1]}]': [f"{test} > k"],
    }


def test_the_python_tracer_gives_pytest_s_node_ids_under_pytest(tmp_path):
    root = tmp_path / "app"
    lay(
        root,
        {
            **PYTHON_PROJECT,
            "tests/test_more.py": "from calc import mul\n\n\ndef helper():\n"
            "    return mul(5, 5)\n\n\ndef test_square():\n    assert helper() == 25\n",
        },
    )
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:django", "-p", "no:cacheprovider"]
    _language, _paths, _workdir, calls = traced(root, argv)
    by_args = {json.dumps(c["args"]): c["tests"] for c in calls}
    # A call from a helper of the test file counts for the test that ran it.
    assert by_args == {
        "[2, 3]": ["tests/test_ops.py::T::test_mul"],
        "[2, 4]": ["tests/test_ops.py::T::test_mul"],
        "[5, 5]": ["tests/test_more.py::test_square"],
    }


def test_every_function_gets_its_share_of_the_inputs():
    calls = [{"module": "m", "function": "busy", "args": [n]} for n in range(100)]
    calls.append({"module": "m", "function": "rare", "args": ["x"]})
    inputs = derive(calls, random.Random(3), limit=80)
    rare = [i for i in inputs if i["function"] == "rare"]
    busy = [i for i in inputs if i["function"] == "busy"]
    unlimited = derive(calls, random.Random(3), limit=10**6)
    assert rare == [i for i in unlimited if i["function"] == "rare"]  # all of rare's
    assert len(busy) == 60  # busy's capped
    assert sum(i["derived"] for i in busy) == 50  # not only the tests' own (visible) inputs


def test_probes_are_deterministic_reference_outcomes_and_discriminate_where_the_start_differs():
    inputs = [{"module": "m", "function": "f", "args": [n], "derived": n > 0} for n in range(5)]
    reference = {
        "i0": {"returns": 6},
        "i1": {"returns": 7},
        "i2": {"returns": 8},
        "i3": {"opaque": "x.Thing"},
        "i4": {"raises": "ValueError"},
    }
    again = {**reference, "i2": {"returns": 9}}  # not deterministic: left out
    start = {"i0": {"returns": 5}, "i1": {"returns": 7}, "i4": {"returns": 1}}
    probes = select(inputs, reference, again, start)
    assert [(p["args"], p["discriminating"]) for p in probes] == [
        ([0], True),
        ([4], True),
        ([1], False),
    ]
    kept = ProbeSet("python", ".", (".",), tuple(probes))
    assert (kept.discriminating, kept.hidden_discriminating, kept.kind) == (2, 1, "equivalence")
    # Discriminating only on the tests' own inputs: a lookup table could answer: check-only.
    visible = ProbeSet("python", ".", (".",), tuple(p for p in probes if not p["derived"]))
    assert visible.kind == "check-only"


def test_the_probes_file_is_private_and_removed_when_there_is_nothing_to_check(tmp_path):
    (tmp_path / "tests").mkdir()
    probes = ProbeSet(
        "python", ".", (".",), ({"id": "p0", "discriminating": True, "expected": {}},)
    )
    record_probes(tmp_path, probes)
    path = tmp_path / "tests" / "probes.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_probes(tmp_path) == probes
    record_probes(tmp_path, ProbeSet.none("no calls"))
    assert not path.exists()


def spec_with(tmp_path: Path, probes: ProbeSet | None, recorded: object) -> TaskSpec:
    tests = {"grading.json": FileEntry(json.dumps({"probes": recorded}).encode())}
    if probes is not None:
        tests["probes.json"] = FileEntry(probes.to_bytes() or b"")
    return TaskSpec(
        tmp_path,
        "t",
        "/app",
        "true",
        "/app",
        "python",
        "unittest",
        60,
        1,
        512,
        b"",
        tests_files=tests,
    )


def test_a_kept_task_is_graded_again_with_its_stored_probes_never_a_new_draw(tmp_path):
    kept = ProbeSet(
        "python",
        ".",
        (".",),
        ({"id": "p0", "discriminating": True, "derived": True, "expected": {"returns": 1}},),
    )
    stored = stored_probes(spec_with(tmp_path, kept, kept.record()))
    assert stored is not None and stored.to_bytes() == kept.to_bytes()
    # Kept check-only: no probe now either. Never kept (no record): drawn.
    check_only = stored_probes(spec_with(tmp_path, None, {"count": 0}))
    assert check_only is not None and check_only.kind == "check-only" and not check_only.probes
    assert stored_probes(spec_with(tmp_path, None, None)) is None
    # A probes.json that is not the one grading.json records: the folder was changed.
    with pytest.raises(InfraError, match="not the one"):
        stored_probes(spec_with(tmp_path, kept, {"count": 1, "sha256": "0" * 64}))


def test_a_go_task_is_check_only_and_its_task_toml_says_why(tmp_path):
    from groundwork.core.docker import Limits
    from tasks_review.core.trials.image import PreparedTask
    from tasks_review.core.trials.probes import GO_NOTE, probes_in_image
    from tasks_review.core.trials.probeset import record_grading

    from .helpers import FAKE_BASE, GO_FIX, GO_START, write

    task_dir = write(
        tmp_path / "go",
        FAKE_BASE,
        GO_START,
        GO_FIX,
        command="go test ./...",
        language="go",
        runner="go",
    )
    spec = read_task(task_dir)
    probes = probes_in_image(PreparedTask(spec, None, Limits()), {}, engine=None, run_id="x")
    assert (probes.kind, probes.notes) == ("check-only", (GO_NOTE,))
    record_grading(task_dir, probes)
    verifier = tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["verifier"]
    assert verifier["grading"] == "check-only" and verifier["why"] == GO_NOTE
