"""Making the hidden probes at keep time, without Docker: the tracers in real Python and Node
processes, inputs derived from what they saw, and the choice of probes."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from groundwork.core.docker import FileEntry
from tasks_review.core.trials.probes import derive, mutations, read_traces, select
from tasks_review.core.trials.probeset import ProbeSet, read_probes, record_probes

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
    assert {c["test"] for c in calls} == {"tests/test_ops.py"}
    assert {c["test_function"] for c in calls} == {"test_mul"}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_node_tracer_records_calls_from_test_files_to_commonjs_exports(tmp_path):
    root = tmp_path / "app"
    lay(
        root,
        {
            "package.json": '{"name": "u", "version": "1.0.0"}\n',
            "src/units.js": "const half = (x) => x / 2;\n"
            "module.exports = { toKiB: (b) => half(b * 2) / 1024, version: 1 };\n",
            "test/units.test.js": "const test = require('node:test');\n"
            "const assert = require('node:assert');\nconst { toKiB } = require('../src/units');\n"
            "test('k', () => { assert.strictEqual(toKiB(2048), 2); toKiB({ a: [1] }); });\n",
        },
    )
    language, _paths, _workdir, calls = traced(root, ["node", "--test"])
    assert language == "node"
    assert sorted(json.dumps(c["args"]) for c in calls) == ["[2048]", '[{"a": [1]}]']
    assert {(c["module"], c["function"], c["test"]) for c in calls} == {
        ("src/units.js", "toKiB", "test/units.test.js")
    }


def test_derived_inputs_differ_from_the_recorded_ones_and_follow_the_seed():
    rng = random.Random(7)
    for value in (1024, 2.5, "Hello World", [1, 2, 3], {"$decimal": "2.50"}, {"a": 1}, True):
        near = mutations(value, rng)
        assert near and value not in near
    assert {"$decimal": "-2.50"} in mutations({"$decimal": "2.50"}, rng)
    assert 1024 * 1024 in mutations(1024, rng)  # the next unit's boundary
    call = {"module": "m", "function": "f", "args": [3, "x"], "kwargs": {"n": 2}}
    first, again = derive([call], random.Random(1)), derive([call], random.Random(1))
    assert first == again and derive([call], random.Random(2)) != first
    assert first[0]["derived"] is False and all(i["derived"] for i in first[1:])


def test_every_function_gets_its_share_of_the_inputs():
    calls = [{"module": "m", "function": "busy", "args": [n]} for n in range(100)]
    calls.append({"module": "m", "function": "rare", "args": ["x"]})
    inputs = derive(calls, random.Random(3), limit=60)
    rare = [i for i in inputs if i["function"] == "rare"]
    busy = [i for i in inputs if i["function"] == "busy"]
    assert len(rare) == 5 and len(busy) == 40  # all of rare's; busy's capped
    assert sum(i["derived"] for i in busy) == 30  # not only the tests' own (visible) inputs


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
