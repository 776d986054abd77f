"""The hidden equivalence probes at grading time: values carried exactly, the runners in Python
and Node reporting what the code did, and root's comparison deciding."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
            "test": "tests/test_ops.py",
            "test_function": "test_mul",
        },
        {"id": "p1", "expected": {"returns": 5}, "discriminating": False},
    ]
}


def test_root_decides_every_discriminating_probe_must_match():
    assert (
        probing.check(PROBES, {"outcomes": {"p0": {"returns": 6}, "p1": {"returns": 9}}})["failed"]
        == []
    )
    checked = probing.check(PROBES, {"outcomes": {"p0": {"returns": 5}}})
    assert checked["failed"] == ["p0"] and checked["matched"] == 0
    assert checked["failed_tests"] == [["tests/test_ops.py", "test_mul"]]
    # A runner that wrote nothing (killed, crashed, forged garbage) fails them all.
    assert probing.check(PROBES, {"error": "no report"})["failed"] == ["p0"]


def test_a_failed_probe_scores_zero_even_when_the_check_passed():
    from ..test_results import OK, PLAN, controls, session

    records = [session(("t.T.test_a", "passed"), *controls())]
    good = probing.check(PROBES, {"outcomes": {"p0": {"returns": 6}}})
    ok = judge_graded_run(OK, records, PLAN, probes=good)
    bad = judge_graded_run(OK, records, PLAN, probes=probing.check(PROBES, {"outcomes": {}}))
    assert ok.reward == 1.0
    assert bad.reward == 0.0 and "hidden equivalence probe(s) disagree" in bad.reasons[-1]


def test_for_a_fraction_only_the_tests_whose_probes_failed_lose_their_credit():
    blocked = (("tests/test_ops.py", "test_mul"),)
    reference = {"tests/test_ops.py::test_mul": 1, "tests/test_ops.py::test_add": 1}
    passed = {k: 1 for k in reference}
    from collections import Counter

    score = judging.fraction_score(reference, Counter(passed), list(reference), blocked)
    assert (score["scored"], score["passed"]) == (2, 1)
    assert score["missed"] == ["tests/test_ops.py::test_mul"]


def test_the_probes_are_made_root_s_alone_before_anything_runs(tmp_path):
    (tmp_path / "probes.json").write_text(json.dumps(PROBES))
    (tmp_path / "probes.json").chmod(0o644)
    probing.lock(str(tmp_path))
    assert (tmp_path / "probes.json").stat().st_mode & 0o777 == 0o600
    assert tmp_path.stat().st_mode & 0o777 == 0o700
    assert probing.load(str(tmp_path))["probes"][0]["id"] == "p0"
