"""How much a check asserts, and when it is too thin to tell a fix from a lookup table."""

from __future__ import annotations

from tasks_review.core.trials.assertions import (
    MIN_ASSERTED_INPUTS,
    CheckSize,
    check_size,
    js_assertions,
    python_assertions,
    too_thin,
)

from ..mining.test_repair_samples import STORIES


def test_python_assertions_are_asserts_self_asserts_and_pytest_raises_with_their_inputs():
    text = """
import pytest

def test_a():
    assert total([1, 2]) == 3
    assert ok()
    with pytest.raises(ValueError):
        total(None)

class T:
    def test_b(self):
        self.assertEqual(total([]), 0)
        self.assertTrue(ready)
        helper.assertEqual(1, 1)  # not a test's assertion
"""
    assert list(python_assertions(text)) == [
        "total([1, 2])",
        "ok()",
        "",
        "total([])",
        "ready",
    ]
    assert list(python_assertions("def broken(:\n")) == []


def test_js_assertions_skip_strings_and_comments_and_take_the_first_argument():
    text = """
const assert = require('node:assert');
// assert.strictEqual(commented(), 1);
test('a (tricky) name, with commas', () => {
  assert.strictEqual(slugify('Hello, (World)'), 'hello-world');
  assert(isOk(1, 2));
  expect(format([1, 2])).toBe('1,2');
  const note = "assert.equal(not, code)";
});
"""
    assert list(js_assertions(text)) == [
        "slugify('Hello, (World)')",
        "isOk(1, 2)",
        "format([1, 2])",
    ]


def test_every_sample_check_asserts_enough_distinct_inputs():
    for fmt, story in STORIES.items():
        files = {path: text.encode() for path, text in story.final.items()}
        size = check_size(files, tests=4)
        assert size.assertions >= 4 and size.asserted_inputs >= 4, (fmt, size)
        assert not too_thin(size)


def test_a_check_of_one_or_two_inputs_is_too_thin_to_tell_a_fix_from_a_lookup_table():
    files = {
        "tests/test_price.py": b"def test_price():\n    assert price(3) == 7\n"
        b"    assert price(3) == 7\n",
        "src/price.py": b"assert False  # not a test file\n",
    }
    size = check_size(files, tests=1)
    assert size == CheckSize(assertions=2, asserted_inputs=1, tests=1)
    assert too_thin(size) and size.to_dict()["too_thin"] is True
    assert not too_thin(CheckSize(MIN_ASSERTED_INPUTS, MIN_ASSERTED_INPUTS, 1))


def test_go_failure_calls_count_with_the_condition_they_check():
    from tasks_review.core.trials.assertions import go_assertions

    from .helpers import GO_START

    assert list(go_assertions(GO_START["calc/calc_test.go"].decode())) == [
        "got := Add(2, 3); got != 5",
        "got := Mul(c.a, c.b); got != c.want",
        "got := Mul(7, 0); got != 0",
    ]
    testify = 'func TestX(t *testing.T) {\n\tassert.Equal(t, Add(1, 2), 3)\n\tt.Log("{")\n}\n'
    assert list(go_assertions(testify)) == ["Add(1, 2)"]
    assert check_size(GO_START, 3).to_dict()["too_thin"] is False
