"""The hidden equivalence probes at grading time: values carried exactly, the runners in Python
and Node reporting what the code did, and root's comparison deciding."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

from tasks_review.core.trials.kit import judging, probe_values, probing
from tasks_review.core.trials.results import judge_graded_run

from .helpers import KIT, write


class AlwaysEqual(Decimal):
    def __eq__(self, other):
        return True

    __hash__ = Decimal.__hash__


def test_values_are_carried_exactly_and_tagged_where_json_cannot_say_them():
    value = [Decimal("2.50"), (1, "a"), b"\x00", {3, 1}, float("nan"), 2**60, {1: "x"}]
    encoded = probe_values.encode(value)
    assert json.loads(json.dumps(encoded)) == encoded  # plain JSON
    decoded = probe_values.decode(encoded)
    assert decoded[:4] == [Decimal("2.50"), (1, "a"), b"\x00", {1, 3}]
    assert decoded[5:] == [2**60, {1: "x"}]


def test_a_lookalike_type_is_no_value_so_it_can_never_match():
    # A Decimal that equals anything passes every assertEqual; here it is an opaque result.
    assert probe_values.encode_result(AlwaysEqual("1")) == {"opaque": f"{__name__}.AlwaysEqual"}
    assert not probe_values.same({"returns": {"$decimal": "1"}}, {"opaque": "x.AlwaysEqual"})
    with pytest.raises(probe_values.Unencodable):
        probe_values.encode([object()])


def test_outcomes_agree_exactly_but_for_float_rounding_and_decimal_exponents():
    same = probe_values.same
    assert same({"returns": 0.30000000000000004}, {"returns": 0.3})
    assert same({"returns": {"$decimal": "2.5"}}, {"returns": {"$decimal": "2.50"}})
    assert not same({"returns": 1}, {"returns": True})
    assert not same({"returns": [1, 2]}, {"returns": [2, 1]})
    assert not same({"raises": "ValueError"}, {"raises": "TypeError"})
    assert not same({"returns": None}, {"raises": "ValueError"})


def test_an_int_is_matched_exactly_never_by_a_float_near_it():
    # Epoch milliseconds off by 123 are within 1e-9 of each other as floats: a buggy start
    # returning float() of its wrong answer matched the reference's int before.
    same = probe_values.same
    assert not same({"returns": 1700000000123}, {"returns": 1700000000000.0})
    assert not same({"returns": 0}, {"returns": 1e-13})
    assert same({"returns": 2.0}, {"returns": 2})  # the reference's float, an int fix
    # A $decimal is text: a number in its place is not the amount.
    assert not same({"returns": {"$decimal": "2.5"}}, {"returns": {"$decimal": 2.5}})


PROJECT = {
    "shop/__init__.py": b"",
    "shop/cart.py": b"from decimal import Decimal\n\n"
    b"def total(prices, tax=0):\n    print('noise on stdout')\n"
    b"    return sum(prices, Decimal('0')) * (1 + Decimal(tax) / 100)\n\n"
    b"def slow(n):\n    while True:\n        pass\n",
    "index.js": b"module.exports = { double: (x) => { console.log('noise'); return x * 2; },\n"
    b"  fail: () => { throw new RangeError('no'); }, later: async (x) => x + 1 };\n",
}


def run_runner(tmp_path: Path, language: str, calls: list[dict]) -> dict:
    for rel, data in PROJECT.items():
        write(tmp_path, rel, data)
    asked = probing.request({"probes": calls, "call_timeout": 0.5}, str(tmp_path))
    program = (
        [shutil.which("node") or "node", str(KIT / "probe_runner.cjs")]
        if language == "node"
        else [sys.executable, "-I", str(KIT / "probe_runner.py")]
    )
    ran = subprocess.run(
        program, input=json.dumps(asked), capture_output=True, text=True, timeout=60
    )
    return json.loads(ran.stdout)["outcomes"]


def test_the_python_runner_reports_values_exceptions_timeouts_and_missing_code(tmp_path):
    outcomes = run_runner(
        tmp_path,
        "python",
        [
            {
                "id": "a",
                "module": "shop.cart",
                "function": "total",
                "args": [[{"$decimal": "10"}]],
                "kwargs": {"tax": 20},
            },
            {"id": "b", "module": "shop.cart", "function": "total", "args": [3]},
            {"id": "c", "module": "shop.cart", "function": "slow", "args": [1]},
            {"id": "d", "module": "shop.gone", "function": "total", "args": []},
        ],
    )
    assert outcomes == {
        "a": {"returns": {"$decimal": "12.0"}},
        "b": {"raises": "TypeError"},
        "c": {"timeout": True},
        "d": {"unavailable": "ModuleNotFoundError"},
    }


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_node_runner_reports_values_exceptions_and_promises(tmp_path):
    outcomes = run_runner(
        tmp_path,
        "node",
        [
            {"id": "a", "module": "index.js", "function": "double", "args": [21]},
            {"id": "b", "module": "index.js", "function": "fail", "args": []},
            {"id": "c", "module": "index.js", "function": "later", "args": [1]},
            {"id": "d", "module": "gone.js", "function": "x", "args": []},
        ],
    )
    assert outcomes == {
        "a": {"returns": 42},
        "b": {"raises": "RangeError"},
        "c": {"returns": 2},
        "d": {"unavailable": "Error"},
    }


PROBES = {
    "probes": [
        {
            "id": "p0",
            "expected": {"returns": 6},
            "discriminating": True,
            "tests": ["tests/test_ops.py::test_mul"],
        },
        {"id": "p1", "expected": {"returns": 5}, "discriminating": False, "tests": []},
        {"id": "p2", "expected": {"raises": "ValueError"}, "discriminating": False, "tests": []},
    ]
}
RIGHT = {"p0": {"returns": 6}, "p1": {"returns": 5}, "p2": {"raises": "ValueError"}}


def test_root_decides_every_probe_must_match_not_only_the_discriminating_ones():
    assert probing.check(PROBES, {"outcomes": RIGHT})["failed"] == []
    checked = probing.check(PROBES, {"outcomes": {**RIGHT, "p0": {"returns": 5}}})
    assert checked["failed"] == ["p0"] and checked["matched"] == 2
    assert checked["failed_tests"] == ["tests/test_ops.py::test_mul"]
    # Anything but the start's answer on the discriminating probe is not enough: the others
    # keep "the opposite of the start" and "always raise" from passing.
    opposite = probing.check(PROBES, {"outcomes": {**RIGHT, "p1": {"returns": 4}}})
    always_raise = {p["id"]: {"raises": "ValueError"} for p in PROBES["probes"]}
    assert opposite["failed"] == ["p1"] and opposite["unlinked"] == 1
    assert probing.check(PROBES, {"outcomes": always_raise})["failed"] == ["p0", "p1"]
    # A runner that wrote nothing (killed, crashed, forged garbage) fails them all.
    assert probing.check(PROBES, {"error": "no report"})["failed"] == ["p0", "p1", "p2"]


def test_what_anyone_may_read_of_a_probe_check_names_no_probe_and_no_test():
    checked = probing.check(PROBES, {"outcomes": {**RIGHT, "p0": {"returns": 5}}})
    shown = probing.summary(checked)
    assert shown == {"probes": 3, "discriminating": 1, "matched": 2, "failed": 1, "error": None}
    assert "p0" not in json.dumps(shown) and "test_mul" not in json.dumps(shown)


def test_a_failed_probe_scores_zero_even_when_the_check_passed():
    from ..test_results import OK, PLAN, controls, session

    records = [session(("t.T.test_a", "passed"), *controls())]
    good = probing.check(PROBES, {"outcomes": RIGHT})
    ok = judge_graded_run(OK, records, PLAN, probes=good)
    bad = judge_graded_run(OK, records, PLAN, probes=probing.check(PROBES, {"outcomes": {}}))
    assert ok.reward == 1.0
    assert bad.reward == 0.0 and "hidden equivalence probe(s) disagree" in bad.reasons[-1]


def test_for_a_fraction_only_the_tests_whose_probes_failed_lose_their_credit():
    from collections import Counter

    reference = {"tests/test_ops.py::test_mul": 1, "tests/test_ops.py::test_mul_more": 1}
    passed = Counter({k: 1 for k in reference})
    # The exact id the tracer saw: a test whose name contains another's keeps its credit.
    blocked = ("tests/test_ops.py::test_mul",)
    score = judging.fraction_score(reference, passed, list(reference), blocked)
    assert (score["scored"], score["passed"]) == (2, 1)
    assert score["missed"] == ["tests/test_ops.py::test_mul"]


def test_a_failed_probe_no_test_is_known_for_takes_every_test_s_credit():
    from ..test_results import OK, PLAN, controls, session

    records = [session(("t.T.test_a", "passed"), ("t.T.test_b", "passed"), *controls())]
    checked = probing.check(PROBES, {"outcomes": {**RIGHT, "p1": {"returns": 4}}})
    verdict = judge_graded_run(
        OK,
        records,
        PLAN,
        reference={"t.T.test_a": 1, "t.T.test_b": 1},
        reward="fraction",
        start_failed=["t.T.test_a", "t.T.test_b"],
        probes=checked,
    )
    assert verdict.reward == 0.0 and verdict.score["missed"] == ["t.T.test_a", "t.T.test_b"]


def written(folder: Path, probes: dict) -> dict:
    data = (json.dumps(probes, indent=1, sort_keys=True) + "\n").encode()
    (folder / "probes.json").write_bytes(data)
    return probing.record(data)


def test_the_probes_are_made_root_s_alone_before_anything_runs(tmp_path):
    recorded = written(tmp_path, PROBES)
    (tmp_path / "probes.json").chmod(0o644)
    probing.lock(str(tmp_path))
    assert (tmp_path / "probes.json").stat().st_mode & 0o777 == 0o600
    assert tmp_path.stat().st_mode & 0o777 == 0o700
    probes, problem = probing.load(str(tmp_path), recorded)
    assert problem is None and probes["probes"][0]["id"] == "p0"
    assert recorded == {"count": 3, "sha256": recorded["sha256"]}


def test_a_missing_or_changed_probes_file_is_a_problem_never_a_check_only_task(tmp_path):
    recorded = written(tmp_path, PROBES)
    changed = {"probes": PROBES["probes"][:1]}
    (tmp_path / "probes.json").write_text(json.dumps(changed))
    assert probing.load(str(tmp_path), recorded) == (
        None,
        "tests/probes.json is not the one the task was kept with",
    )
    (tmp_path / "probes.json").unlink()
    assert probing.load(str(tmp_path), recorded)[1] == (
        "the task's hidden probes (tests/probes.json) are missing"
    )
    (tmp_path / "probes.json").symlink_to(tmp_path / "elsewhere.json")
    assert "not a regular file" in probing.load(str(tmp_path), recorded)[1]
    (tmp_path / "probes.json").unlink()
    assert probing.load(str(tmp_path), None)[1] == (
        "grading.json does not say how many hidden probes the task has"
    )
    # A check-only task: no file, and none may appear.
    assert probing.load(str(tmp_path), {"count": 0}) == (None, None)
    written(tmp_path, PROBES)
    assert probing.load(str(tmp_path), {"count": 0})[1] == (
        "a probes.json the task was not kept with"
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder to another uid")
def test_the_sweep_removes_what_the_identity_created_since_it_started_and_nothing_else(tmp_path):
    me = os.getuid()
    shared = tmp_path / "shared"  # /tmp as the probe identity sees it: anyone's to write in
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "old").write_text("made before the probes ran")
    os.chown(shared, 65000, 65000)  # someone else's folder, as /tmp is root's
    time.sleep(1.2)  # ctimes a second apart: the sweep allows a second of clock granularity
    since = time.time()
    (shared / "inputs.txt").write_text("what the probe process read on stdin")
    (shared / "kept").mkdir()
    (shared / "kept" / "more").write_text("x")
    removed = probing.sweep(me, since, top=str(tmp_path))
    assert sorted(removed) == [str(shared / "inputs.txt"), str(shared / "kept")]
    assert sorted(p.name for p in shared.iterdir()) == ["old"]


def test_the_sweep_walks_every_place_the_probe_identity_could_write_and_nothing_twice(tmp_path):
    mounts = tmp_path / "mounts"
    logs, shm, listed = tmp_path / "logs", tmp_path / "logs" / "verifier", tmp_path / "cache"
    for folder in (shm, listed):
        folder.mkdir(parents=True)
    mounts.write_text(
        f"overlay / overlay rw 0 0\nproc /proc proc rw 0 0\ntmpfs {logs} tmpfs rw 0 0\n"
        f"tmpfs {shm} tmpfs rw 0 0\ncgroup /sys/fs/cgroup cgroup ro 0 0\n"
    )
    roots = probing.sweep_roots([str(listed)], str(tmp_path / "app"), mounts=str(mounts))

    # The task's own list and the mounts, the usual places anyone may write where this machine
    # has them, each walked once (none inside another); never the root, /proc or /sys.
    def covered(path):
        return any(path == r or path.startswith(r + "/") for r in roots)

    assert covered(str(logs)) and covered(str(listed)) and str(shm) not in roots
    assert not any(r.startswith(o + "/") for r in roots for o in roots)
    assert {r for r in roots if r in probing.WRITABLE} == {
        p for p in probing.WRITABLE if os.path.isdir(p) and not os.path.islink(p)
    }
    assert not any(r == "/" or r.startswith(("/proc", "/sys")) for r in roots)


def test_a_fraction_scores_zero_when_a_probe_of_what_worked_at_the_start_disagrees():
    # The new test's probe fails (its credit goes) and so does a probe of the old test, which
    # passed at the start: the submission changed working behaviour on a hidden input, as a
    # kept test failing would show. Before, the two other new tests kept their credit (0.67).
    from ..test_results import OK, PLAN, controls, session

    reference = dict.fromkeys(["t.T.test_a", "t.T.test_b", "t.T.test_c", "t.T.test_old"], 1)
    probes = {
        "probes": [
            {
                "id": "p0",
                "expected": {"returns": 5},
                "discriminating": True,
                "tests": ["t.T.test_a"],
            },
            {
                "id": "p1",
                "expected": {"returns": 7},
                "discriminating": False,
                "tests": ["t.T.test_old"],
            },
        ]
    }
    records = [session(*((k, "passed") for k in reference), *controls())]

    def verdict(outcomes):
        return judge_graded_run(
            OK,
            records,
            PLAN,
            reference=reference,
            reward="fraction",
            start_failed=["t.T.test_a", "t.T.test_b", "t.T.test_c"],
            probes=probing.check(probes, {"outcomes": outcomes}),
        )

    right = {"p0": {"returns": 5}, "p1": {"returns": 7}}
    assert verdict(right).reward == 1.0 and verdict(right).score["probed"] == 1
    assert verdict({**right, "p0": {"returns": 4}}).reward == 2 / 3  # test_a loses its credit
    broke_old = verdict({"p0": {"returns": 4}, "p1": {"returns": 6}})
    assert broke_old.reward == 0.0 and "worked at the start" in broke_old.reasons[-1]
    # An empty (or forged) report matches nothing: the share would rest on the check alone.
    assert verdict({}).reward == 0.0
