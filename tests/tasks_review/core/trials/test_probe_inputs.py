"""The hidden inputs are a secret someone who has read the code cannot enumerate (without Docker).

On each bundled sample, the tests' calls are traced in real Python and Node processes, inputs
are drawn for many tasks' worth of seeds, and the probe runner gives the reference's and the
starting code's outcomes. An attacker who has read ``probeinputs.py`` could memorise the
reference's answers for the visible inputs and for every input a fixed transform gives (all the
old ``v + k``, ``v * k``, ``v ** 2``, case and order changes): for every draw, some
discriminating probe lies outside that table.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from tasks_review.core.trials.kit import probe_values
from tasks_review.core.trials.probeinputs import derive, mutations

from ..mining.test_repair_samples import STORIES
from .memorised import COMMANDS, hacked_files, input_key, outcomes, table_inputs, visible
from .test_probes import lay

SEEDS = 100


@pytest.mark.parametrize("fmt", sorted(COMMANDS))
def test_no_table_of_the_visible_and_enumerable_inputs_answers_every_draw(fmt, tmp_path):
    if COMMANDS[fmt][0] == "node" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    language, calls = visible(fmt, tmp_path)
    table = table_inputs(calls)
    draws = [derive(calls, random.Random(seed)) for seed in range(SEEDS)]
    inputs = list({input_key(i): i for d in draws for i in d}.values())
    reference = outcomes(tmp_path / "ref" / "app", language, inputs)
    start = outcomes(tmp_path / "start" / "app", language, inputs)
    secret = set()
    for n, item in enumerate(inputs):
        ref, st = reference[f"i{n}"], start[f"i{n}"]
        if set(ref) <= {"returns", "raises"} and not probe_values.same(ref, st):
            if input_key(item) not in table:
                secret.add(input_key(item))
    counts = [sum(input_key(i) in secret for i in d) for d in draws]
    assert min(counts) >= 1, (fmt, counts)


def test_draws_differ_from_the_recorded_value_and_follow_the_seed():
    rng = random.Random(7)
    for value in (1024, 2.5, "Hello World", [1, 2, 3], {"$decimal": "2.50"}, {"a": 1}, True):
        near = mutations(value, rng)
        assert near and value not in near
    call = {"module": "m", "function": "f", "args": [3, "x"], "kwargs": {"n": 2}, "tests": ["t"]}
    first, again = derive([call], random.Random(1)), derive([call], random.Random(1))
    assert first == again and derive([call], random.Random(2)) != first
    assert first[0]["derived"] is False and all(i["derived"] for i in first[1:])
    assert all(i["tests"] == ["t"] for i in first)


@pytest.mark.parametrize("fmt", sorted(COMMANDS))
def test_a_table_of_the_visible_and_enumerable_answers_passes_the_samples_own_tests(fmt, tmp_path):
    # The premise of the Docker test that grades it: the unfixed code with the table passes
    # the recorded check (a check without the probes scores it 1).
    if COMMANDS[fmt][0] == "node" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    hacked = hacked_files(fmt, tmp_path / "table")
    root = tmp_path / "hacked"
    lay(root, {**STORIES[fmt].start, **hacked})
    ran = subprocess.run(COMMANDS[fmt], cwd=root, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    unfixed = tmp_path / "unfixed"
    lay(unfixed, STORIES[fmt].start)
    assert subprocess.run(COMMANDS[fmt], cwd=unfixed, capture_output=True).returncode != 0


def test_extreme_values_give_plain_draws_or_none_never_an_error():
    rng = random.Random(3)
    for value in (1.7e308, -1e-320, 2**53 - 1, {"$int": str(10**40)}, {"$decimal": "1E+40"}):
        for drawn in mutations(value, rng):
            assert json.loads(json.dumps(drawn, allow_nan=False)) == drawn
    assert mutations({"$decimal": "NaN"}, rng) == []
