"""How much a check asserts, and when that is too little to tell a fix from a lookup table.

No grader catches a submission that hard-codes the answers to the visible tests: the tests are
the task, and hidden ones would be another task. What the review desk can do is say how many
assertions the check has and how many distinct inputs they try, and flag a check too thin for
its pass to mean much.

The counts are approximate, by design (no test is run):

* Python test files: ``assert`` statements, ``self.assert*(...)`` calls and ``pytest.raises``
  (via ``ast``); the asserted input is the source text of the first argument (or of the left
  side of an ``assert a == b``, or of the whole asserted expression).
* JavaScript/TypeScript test files: ``assert(...)``, ``assert.*(...)`` and ``expect(...)``
  calls, found by a small scanner that skips strings and comments; the asserted input is the
  text of the first argument. A JavaScript parser would be exact, but none is in the standard
  library and the number only needs to be about right.
* Go test files: ``t.Error``/``t.Fatal`` calls (any receiver, the ``f`` forms too), the
  asserted input being the condition of the ``if`` they sit in (``got != want``), and testify's
  ``assert.*``/``require.*`` calls, with their second argument (the first is ``t``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..mining.files import is_test_file

# Fewer distinct asserted inputs than this and a table of the expected answers is as short as
# the check itself.
MIN_ASSERTED_INPUTS = 3
_PY = (".py",)
_JS = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".cts", ".mts", ".tsx")
_JS_CALL = re.compile(r"\b(assert(?:\.[A-Za-z]+)?|expect)\s*\(")
_GO = (".go",)
_GO_FAIL = re.compile(r"\b\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(")
_GO_IF_BEFORE = re.compile(r"\bif\s+([^{\n]+?)\s*\{\s*\Z")  # the `if` a failure call opens
_GO_TESTIFY = re.compile(r"\b(?:assert|require)\.[A-Z]\w*\(")


@dataclass(frozen=True, slots=True)
class CheckSize:
    assertions: int  # assertion sites in the reference's test files
    asserted_inputs: int  # distinct inputs those assertions try
    tests: int  # tests that passed on the reference

    def to_dict(self) -> dict[str, object]:
        return {
            "assertions": self.assertions,
            "asserted_inputs": self.asserted_inputs,
            "tests": self.tests,
            "too_thin": too_thin(self),
        }


def too_thin(size: CheckSize) -> bool:
    """A check whose asserted inputs are so few that a lookup table passes it as well as a fix."""
    return size.asserted_inputs < MIN_ASSERTED_INPUTS


def check_size(files: Mapping[str, bytes], tests: int) -> CheckSize:
    """The size of the check whose test files are among ``files`` (the reference's)."""
    count = 0
    inputs: set[tuple[str, str]] = set()
    for path in sorted(files):
        if not is_test_file(path):
            continue
        text = files[path].decode("utf-8", "replace")
        if path.endswith(_PY):
            found = list(python_assertions(text))
        elif path.endswith(_JS):
            found = list(js_assertions(text))
        elif path.endswith(_GO):
            found = list(go_assertions(text))
        else:
            continue
        count += len(found)
        inputs.update((path, i) for i in found if i)
    return CheckSize(count, len(inputs), tests)


def python_assertions(text: str) -> Iterable[str]:
    """The asserted input of every assertion in a Python file ("" when there is none)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            test = node.test
            yield ast.unparse(test.left if isinstance(test, ast.Compare) else test)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            is_self_assert = (
                isinstance(func.value, ast.Name)
                and func.value.id == "self"
                and func.attr.startswith("assert")
            )
            is_raises = (
                isinstance(func.value, ast.Name)
                and func.value.id == "pytest"
                and func.attr == "raises"
            )
            if is_self_assert:
                yield ast.unparse(node.args[0]) if node.args else ""
            elif is_raises:
                yield ""


def go_assertions(text: str) -> Iterable[str]:
    """The asserted input of every failure call in a Go test file ("" when none is found)."""
    code = _without_strings_and_comments(text)
    for match in _GO_FAIL.finditer(code):
        condition = _GO_IF_BEFORE.search(code, max(0, match.start() - 300), match.start())
        yield " ".join(condition.group(1).split()) if condition else ""
    for match in _GO_TESTIFY.finditer(code):
        _t, after = _argument(code, text, match.end())
        value, _end = _argument(code, text, after + 1)
        yield value


def js_assertions(text: str) -> Iterable[str]:
    """The first argument's text of every assert/expect call in a JavaScript file."""
    code = _without_strings_and_comments(text)
    for match in _JS_CALL.finditer(code):
        yield _argument(code, text, match.end())[0]


def _argument(code: str, text: str, start: int) -> tuple[str, int]:
    """The call argument starting at ``start`` (its text, whitespace folded) and where it ends."""
    depth, end = 0, start
    while end < len(code):
        char = code[end]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif char == "," and depth == 0:
            break
        end += 1
    return " ".join(text[start:end].split()), end


def _without_strings_and_comments(text: str) -> str:
    """``text`` with the inside of strings and comments blanked, offsets kept, so brackets in
    them do not count. Strings keep a marker so "a" and "b" stay different inputs."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
            i = end
        elif char in "'\"`":
            end = i + 1
            while end < n and text[end] != char:
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
            # Brackets inside become spaces; the rest of the text stays for the input's name.
            out[i:end] = [c if c not in "()[]{}," else " " for c in text[i:end]]
            i = end
        else:
            i += 1
    return "".join(out)
