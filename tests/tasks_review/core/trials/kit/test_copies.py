"""Control copies of Python tests (kit/copies.py): renamed, verbatim or with one assertion false."""

from __future__ import annotations

import ast
import random
import unittest

import pytest

from tasks_review.core.trials.kit import copies

SOURCE = """import unittest
from decimal import Decimal


def double(x):
    return 2 * x


class T(unittest.TestCase):
    def test_numbers(self):
        value = double(2)
        self.assertEqual(value, 4)
        self.assertEqual(double(Decimal("1.25")), Decimal("2.50"))
        if value:
            self.assertTrue(value)  # nested: not a top-level assertion

    def test_plain(self):
        assert double(3) == 6
        assert [double(1)] == [2]


def test_function():
    assert double(0) == 0
"""


def namespace():
    space: dict = {"__name__": "t_copies"}
    exec(compile(SOURCE, "/app/tests/test_x.py", "exec"), space)
    return space


def test_finds_methods_and_functions_and_their_top_level_assertions():
    tree = ast.parse(SOURCE)
    assert copies.assertions(copies.find(tree, "T.test_numbers")) == [1, 2]
    assert copies.assertions(copies.find(tree, "T.test_plain")) == [0, 1]
    assert copies.find(tree, "test_function").name == "test_function"
    assert copies.find(tree, "T.missing") is None and copies.find(tree, "double.x") is None


def run(space, name):
    result = unittest.TestResult()
    space["T"](name).run(result)
    return result


@pytest.mark.parametrize("seed", range(8))
def test_a_verbatim_copy_passes_and_a_falsified_one_fails_with_the_same_file_and_lines(seed):
    tree = ast.parse(SOURCE)
    space = namespace()
    rng = random.Random(seed)
    for qualname in ("T.test_numbers", "T.test_plain"):
        original = copies.find(tree, qualname)
        for at in range(len(copies.assertions(original))):
            same = copies.make(original, "test_aaaaaaaaaaaaaa", rng=rng)
            false = copies.make(original, "test_bbbbbbbbbbbbbb", fail_at=at, rng=rng)
            for node in (same, false):
                made = copies.compile_function(node, "/app/tests/test_x.py", space)
                setattr(space["T"], node.name, made)
                assert made.__code__.co_filename == "/app/tests/test_x.py"
                assert made.__code__.co_firstlineno == original.lineno
            assert run(space, "test_aaaaaaaaaaaaaa").wasSuccessful()
            failed = run(space, "test_bbbbbbbbbbbbbb")
            assert len(failed.failures) == 1 and not failed.errors, (qualname, at, seed)


def test_a_falsified_copy_changes_only_the_assertion_it_was_asked_to():
    tree = ast.parse(SOURCE)
    original = copies.find(tree, "T.test_numbers")
    false = copies.make(original, "test_x", fail_at=1, rng=random.Random(0))
    before, after = ast.unparse(original).splitlines(), ast.unparse(false).splitlines()
    changed = [(a, b) for a, b in zip(before[1:], after[1:], strict=True) if a != b]
    assert len(changed) == 1 and "Decimal" in changed[0][0]
