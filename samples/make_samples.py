"""Write the bundled sample trajectories, deterministically.

    python samples/make_samples.py           # (re)write the samples beside this script
    python samples/make_samples.py --check   # exit 1 if a sample on disk is out of date

Four small session logs, one per supported source format, each telling the same
kind of story in a tiny project: the user asks for a feature, the agent writes the
files, runs the project's check, sees it fail, fixes the bug and runs the very same
check again, which passes. Every file the project has is written by a tool call in
the log, so the whole project can be rebuilt from the log alone, and the checks
need nothing beyond the standard library (``python3 -m unittest``, ``node --test``).

The command outputs below are what those commands really print on the files below
(captured with Python 3.12 and Node 20; only timings were frozen), and
``tests/test_samples.py`` runs every project again to keep it that way.

Nothing here is imported by the application; the stories are exported as
``STORIES`` for the tests.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMESPACE = uuid.UUID("6f1c2a7e-3d0b-4c59-9a8e-2b51f0e7c4d3")
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


# --------------------------------------------------------------------------
# deterministic ids and clocks
# --------------------------------------------------------------------------


def uid(label: str) -> str:
    """A stable random-looking UUID for ``label``."""
    return str(uuid.uuid5(NAMESPACE, label))


def token(label: str, length: int, alphabet: str = BASE62) -> str:
    """``length`` stable random-looking characters for ``label``."""
    digest = int.from_bytes(hashlib.sha256(label.encode()).digest(), "big")
    chars = []
    for _ in range(length):
        digest, index = divmod(digest, len(alphabet))
        chars.append(alphabet[index])
    return "".join(chars)


def uuid7(label: str, when: datetime) -> str:
    """A UUIDv7 whose time bits are ``when`` (how Codex names its sessions)."""
    millis = int(when.timestamp() * 1000)
    rand = int.from_bytes(hashlib.sha256(label.encode()).digest()[:10], "big")
    value = (millis << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


class Clock:
    """Monotonic wall-clock time for one session."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, seconds: float) -> str:
        self.now += timedelta(seconds=seconds)
        return self.iso()

    def iso(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"

    def millis(self) -> int:
        return int(self.now.timestamp() * 1000)


def jsonl(lines: list[dict]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} must occur exactly once"
    return text.replace(old, new)


def unified_hunks(old: str, new: str, context: int) -> list[tuple[int, int, int, int, list[str]]]:
    """(old_start, old_lines, new_start, new_lines, lines) hunks, as diff(1) counts them."""
    a, b = old.splitlines(), new.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + line for line in a[a1:a2]]
                continue
            lines += ["-" + line for line in a[a1:a2]]
            lines += ["+" + line for line in b[b1:b2]]
        hunks.append((i1 + 1, i2 - i1, j1 + 1, j2 - j1, lines))
    return hunks


# --------------------------------------------------------------------------
# recorded command output
# --------------------------------------------------------------------------


def unittest_verbose(
    module: str,
    results: list[tuple[str, str, str]],
    elapsed: str,
    failure: tuple[str, str, str, int, str, list[str]] | None = None,
) -> str:
    """What ``python -m unittest -v`` prints (on stderr) for these results.

    ``results`` are (class, method, "ok" | "FAIL") in run order; ``failure`` is
    (class, method, file, line, source line, assertion message lines).
    """
    out = [f"{meth} ({module}.{cls}.{meth}) ... {status}" for cls, meth, status in results]
    if failure:
        cls, meth, file, line, source, message = failure
        out += [
            "",
            "=" * 70,
            f"FAIL: {meth} ({module}.{cls}.{meth})",
            "-" * 70,
            "Traceback (most recent call last):",
            f'  File "{file}", line {line}, in {meth}',
            f"    {source}",
            *message,
        ]
    out += ["", "-" * 70, f"Ran {len(results)} tests in {elapsed}", ""]
    out.append("FAILED (failures=1)" if failure else "OK")
    return "\n".join(out) + "\n"


NODE_STACK = """\
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    Test.postRun (node:internal/test_runner/test:889:19)
    Test.run (node:internal/test_runner/test:835:12)
    async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
"""


def tap_report(tests: list[tuple[str, str]], failure: dict | None, total_ms: str) -> str:
    """What ``node --test`` (Node 20, TAP reporter) prints for these tests.

    ``tests`` are (name, duration_ms); ``failure`` describes the one failing test.
    """
    out = ["TAP version 13"]
    for number, (name, duration) in enumerate(tests, 1):
        out.append(f"# Subtest: {name}")
        if failure and failure["name"] == name:
            out += [
                f"not ok {number} - {name}",
                "  ---",
                f"  duration_ms: {duration}",
                f"  location: '{failure['location']}'",
                "  failureType: 'testCodeFailure'",
                "  error: |-",
                "    Expected values to be strictly equal:",
                "    + actual - expected",
                "    ",
                f"    + '{failure['actual']}'",
                f"    - '{failure['expected']}'",
                *failure.get("caret", []),
                "  code: 'ERR_ASSERTION'",
                "  name: 'AssertionError'",
                f"  expected: '{failure['expected']}'",
                f"  actual: '{failure['actual']}'",
                "  operator: 'strictEqual'",
                "  stack: |-",
                f"    TestContext.<anonymous> ({failure['frame']})",
                *NODE_STACK.splitlines(),
                "  ...",
            ]
        else:
            out += [f"ok {number} - {name}", "  ---", f"  duration_ms: {duration}", "  ..."]
    failed = 1 if failure else 0
    out += [
        f"1..{len(tests)}",
        f"# tests {len(tests)}",
        "# suites 0",
        f"# pass {len(tests) - failed}",
        f"# fail {failed}",
        "# cancelled 0",
        "# skipped 0",
        "# todo 0",
        f"# duration_ms {total_ms}",
    ]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# the stories
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Story:
    """One repair story: what the files were around the failing and the passing check."""

    fmt: str  # the source format: claude-code | codex | pi | atif
    sample: str  # the sample's path relative to samples/
    cwd: str  # the project directory recorded in the log
    command: str  # the check, exactly as the agent ran it (both times)
    argv: tuple[str, ...]  # the same check for subprocess (tests run it for real)
    start: dict[str, str]  # the files just before the failing run
    final: dict[str, str]  # the files just before the passing run
    fail_output: str  # what the failing run printed (exit status 1)
    pass_output: str  # what the passing run printed (exit status 0)
    request: str  # the user's request

    @property
    def runtime(self) -> str:
        return self.argv[0]


# ---- 1. Claude Code: invoice-tools (Python) ------------------------------

INVOICE_CWD = "/home/dev/projects/invoice-tools"

INVOICE_TOTALS = '''\
"""Invoice arithmetic: line totals and the invoice grand total."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def _money(value):
    return Decimal(str(value))


def line_total(quantity, unit_price):
    """Return quantity * unit_price, rounded half-up to the cent."""
    return (Decimal(quantity) * _money(unit_price)).quantize(CENT, rounding=ROUND_HALF_UP)


def invoice_total(lines, tax_rate=0):
    """Return the grand total of ``lines`` plus tax.

    ``lines`` is an iterable of ``(quantity, unit_price)`` pairs and ``tax_rate``
    is a percentage (``20`` means 20 %).
    """
    subtotal = sum((line_total(qty, price) for qty, price in lines), Decimal("0"))
    tax = subtotal * _money(tax_rate)
    return (subtotal + tax).quantize(CENT, rounding=ROUND_HALF_UP)
'''

INVOICE_INIT = '''\
"""Small helpers for working with invoices."""

from .totals import invoice_total, line_total

__all__ = ["invoice_total", "line_total"]
'''

INVOICE_TESTS = """\
import unittest
from decimal import Decimal

from invoice import invoice_total, line_total


class LineTotalTests(unittest.TestCase):
    def test_multiplies_quantity_by_unit_price(self):
        self.assertEqual(line_total(3, "2.50"), Decimal("7.50"))

    def test_rounds_half_up_to_the_cent(self):
        self.assertEqual(line_total(1, "0.125"), Decimal("0.13"))


class InvoiceTotalTests(unittest.TestCase):
    def test_empty_invoice_is_zero(self):
        self.assertEqual(invoice_total([]), Decimal("0.00"))

    def test_sums_lines_without_tax(self):
        lines = [(2, "10.00"), (1, "4.99")]
        self.assertEqual(invoice_total(lines), Decimal("24.99"))

    def test_adds_tax_as_a_percentage(self):
        lines = [(2, "10.00"), (1, "4.99")]
        self.assertEqual(invoice_total(lines, tax_rate=20), Decimal("29.99"))


if __name__ == "__main__":
    unittest.main()
"""

INVOICE_FIX = (
    "    tax = subtotal * _money(tax_rate)\n",
    "    tax = subtotal * _money(tax_rate) / 100\n",
)

_INVOICE_RESULTS = [
    ("InvoiceTotalTests", "test_adds_tax_as_a_percentage", "ok"),
    ("InvoiceTotalTests", "test_empty_invoice_is_zero", "ok"),
    ("InvoiceTotalTests", "test_sums_lines_without_tax", "ok"),
    ("LineTotalTests", "test_multiplies_quantity_by_unit_price", "ok"),
    ("LineTotalTests", "test_rounds_half_up_to_the_cent", "ok"),
]

INVOICE = Story(
    fmt="claude-code",
    sample=f"claude-code/{uid('claude-code/invoice-tools/session')}.jsonl",
    cwd=INVOICE_CWD,
    command="python3 -m unittest discover -s tests -v",
    argv=("python3", "-m", "unittest", "discover", "-s", "tests", "-v"),
    start={
        "invoice/totals.py": INVOICE_TOTALS,
        "invoice/__init__.py": INVOICE_INIT,
        "tests/test_totals.py": INVOICE_TESTS,
    },
    final={
        "invoice/totals.py": replace_once(INVOICE_TOTALS, *INVOICE_FIX),
        "invoice/__init__.py": INVOICE_INIT,
        "tests/test_totals.py": INVOICE_TESTS,
    },
    fail_output=unittest_verbose(
        "test_totals",
        [(c, m, "FAIL" if i == 0 else s) for i, (c, m, s) in enumerate(_INVOICE_RESULTS)],
        "0.001s",
        failure=(
            "InvoiceTotalTests",
            "test_adds_tax_as_a_percentage",
            f"{INVOICE_CWD}/tests/test_totals.py",
            25,
            'self.assertEqual(invoice_total(lines, tax_rate=20), Decimal("29.99"))',
            ["AssertionError: Decimal('524.79') != Decimal('29.99')"],
        ),
    ),
    pass_output=unittest_verbose("test_totals", _INVOICE_RESULTS, "0.001s"),
    request=(
        "Please add an `invoice_total(lines, tax_rate=0)` function in a new `invoice` package. "
        "`lines` are (quantity, unit_price) pairs, `tax_rate` is a percentage (20 means 20 %), "
        "and amounts should be rounded half-up to the cent. Add unit tests with the standard "
        "library's unittest (no pytest, no other dependencies) and make sure they pass."
    ),
)


# ---- 2. Codex: slugify (Node) ---------------------------------------------

SLUGIFY_CWD = "/home/dev/projects/slugify"

SLUGIFY_PACKAGE = """\
{
  "name": "slugify",
  "version": "0.1.0",
  "description": "Turn post titles into URL slugs",
  "main": "src/slugify.js",
  "scripts": {
    "test": "node --test"
  },
  "license": "MIT"
}
"""

SLUGIFY_SRC = """\
'use strict';

/**
 * Turn a title into a URL slug: lower-case ASCII letters and digits
 * separated by single hyphens.
 */
function slugify(title) {
  return String(title)
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9\\s-]/g, '')
    .replace(/[\\s-]+/, '-');
}

module.exports = { slugify };
"""

SLUGIFY_TEST = """\
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { slugify } = require('../src/slugify');

test('lower-cases and joins two words', () => {
  assert.strictEqual(slugify('Hello World'), 'hello-world');
});

test('drops punctuation', () => {
  assert.strictEqual(slugify('Hello, World!'), 'hello-world');
});

test('trims surrounding whitespace', () => {
  assert.strictEqual(slugify('  Spaced Out  '), 'spaced-out');
});

test('joins every word of a longer title', () => {
  assert.strictEqual(slugify('Node Test Runner Basics'), 'node-test-runner-basics');
});
"""

SLUGIFY_FIX = ("    .replace(/[\\s-]+/, '-');\n", "    .replace(/[\\s-]+/g, '-');\n")

_SLUGIFY_NAMES = [
    "lower-cases and joins two words",
    "drops punctuation",
    "trims surrounding whitespace",
    "joins every word of a longer title",
]
_NPM_HEADER = "\n> slugify@0.1.0 test\n> node --test\n\n"

SLUGIFY = Story(
    fmt="codex",
    sample="codex/rollout-2026-03-02T10-00-00-{}.jsonl".format(
        uuid7("codex/slugify/session", datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC))
    ),
    cwd=SLUGIFY_CWD,
    command="npm test",
    argv=("npm", "test"),
    start={
        "package.json": SLUGIFY_PACKAGE,
        "src/slugify.js": SLUGIFY_SRC,
        "test/slugify.test.js": SLUGIFY_TEST,
    },
    final={
        "package.json": SLUGIFY_PACKAGE,
        "src/slugify.js": replace_once(SLUGIFY_SRC, *SLUGIFY_FIX),
        "test/slugify.test.js": SLUGIFY_TEST,
    },
    fail_output=_NPM_HEADER
    + tap_report(
        list(zip(_SLUGIFY_NAMES, ["0.824339", "0.14117", "0.08049", "0.86565"], strict=True)),
        {
            "name": "joins every word of a longer title",
            "location": f"{SLUGIFY_CWD}/test/slugify.test.js:19:1",
            "frame": f"{SLUGIFY_CWD}/test/slugify.test.js:20:10",
            "actual": "node-test runner basics",
            "expected": "node-test-runner-basics",
            "caret": ["                ^"],
        },
        "79.934299",
    ),
    pass_output=_NPM_HEADER
    + tap_report(
        list(zip(_SLUGIFY_NAMES, ["0.874313", "0.118477", "0.082133", "0.069333"], strict=True)),
        None,
        "89.021175",
    ),
    request=(
        "Set up a tiny Node package here with a `slugify(title)` function: lower-case, ASCII "
        "letters and digits only, words joined by single hyphens, punctuation dropped. No "
        "dependencies at all - test it with the built-in node:test runner via `npm test`."
    ),
)


# ---- 3. pi: wordstats (Python) --------------------------------------------

WORDSTATS_CWD = "/home/dev/projects/wordstats"

WORDSTATS_SRC = '''\
"""Word statistics for plain text."""

import re
from collections import Counter

WORD = re.compile(r"[a-z0-9']+")


def words(text):
    """Return the lower-cased words of ``text``, punctuation stripped."""
    return [w.strip("'") for w in WORD.findall(text.lower()) if w.strip("'")]


def word_count(text):
    """Return how many words ``text`` contains."""
    return len(words(text))


def top_words(text, n=3):
    """Return the ``n`` most frequent words as ``(word, count)`` pairs.

    Higher counts come first; words with the same count are ordered
    alphabetically.
    """
    return Counter(words(text)).most_common(n)
'''

WORDSTATS_TESTS = """\
import unittest

from wordstats import top_words, word_count, words


class WordsTests(unittest.TestCase):
    def test_lowercases_and_strips_punctuation(self):
        self.assertEqual(words("Hello, world! Hello?"), ["hello", "world", "hello"])

    def test_keeps_apostrophes_inside_words(self):
        self.assertEqual(words("It's 'quoted'"), ["it's", "quoted"])


class WordCountTests(unittest.TestCase):
    def test_counts_words(self):
        self.assertEqual(word_count("one two  three\\nfour"), 4)

    def test_empty_text_has_no_words(self):
        self.assertEqual(word_count(""), 0)


class TopWordsTests(unittest.TestCase):
    def test_most_frequent_first(self):
        self.assertEqual(top_words("a b b c c c", 2), [("c", 3), ("b", 2)])

    def test_ties_are_alphabetical(self):
        self.assertEqual(top_words("pear apple pear apple fig", 2), [("apple", 2), ("pear", 2)])


if __name__ == "__main__":
    unittest.main()
"""

WORDSTATS_FIX = (
    "    return Counter(words(text)).most_common(n)\n",
    "    counts = Counter(words(text))\n"
    "    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]\n",
)

_WORDSTATS_RESULTS = [
    ("TopWordsTests", "test_most_frequent_first", "ok"),
    ("TopWordsTests", "test_ties_are_alphabetical", "ok"),
    ("WordCountTests", "test_counts_words", "ok"),
    ("WordCountTests", "test_empty_text_has_no_words", "ok"),
    ("WordsTests", "test_keeps_apostrophes_inside_words", "ok"),
    ("WordsTests", "test_lowercases_and_strips_punctuation", "ok"),
]

WORDSTATS = Story(
    fmt="pi",
    sample="pi/2026-03-04T15-21-07-402Z_{}.jsonl".format(uid("pi/wordstats/session")),
    cwd=WORDSTATS_CWD,
    command="python3 -m unittest -v",
    argv=("python3", "-m", "unittest", "-v"),
    start={"wordstats.py": WORDSTATS_SRC, "test_wordstats.py": WORDSTATS_TESTS},
    final={
        "wordstats.py": replace_once(WORDSTATS_SRC, *WORDSTATS_FIX),
        "test_wordstats.py": WORDSTATS_TESTS,
    },
    fail_output=unittest_verbose(
        "test_wordstats",
        [(c, m, "FAIL" if i == 1 else s) for i, (c, m, s) in enumerate(_WORDSTATS_RESULTS)],
        "0.001s",
        failure=(
            "TopWordsTests",
            "test_ties_are_alphabetical",
            f"{WORDSTATS_CWD}/test_wordstats.py",
            27,
            'self.assertEqual(top_words("pear apple pear apple fig", 2), '
            '[("apple", 2), ("pear", 2)])',
            [
                "AssertionError: Lists differ: [('pear', 2), ('apple', 2)] != "
                "[('apple', 2), ('pear', 2)]",
                "",
                "First differing element 0:",
                "('pear', 2)",
                "('apple', 2)",
                "",
                "- [('pear', 2), ('apple', 2)]",
                "+ [('apple', 2), ('pear', 2)]",
            ],
        ),
    ),
    pass_output=unittest_verbose("test_wordstats", _WORDSTATS_RESULTS, "0.001s"),
    request=(
        "Write a wordstats.py module with words(text), word_count(text) and "
        "top_words(text, n=3): most frequent first, ties in alphabetical order, case and "
        "punctuation ignored. Put unittest tests in test_wordstats.py and run them with "
        "`python3 -m unittest -v`."
    ),
)


# ---- 4. ATIF: bytesize (Node) ----------------------------------------------

BYTESIZE_CWD = "/home/dev/projects/bytesize"

BYTESIZE_PACKAGE = """\
{
  "name": "bytesize",
  "version": "1.0.0",
  "description": "Human-readable byte sizes",
  "main": "index.js",
  "scripts": {
    "test": "node --test"
  },
  "license": "MIT"
}
"""

BYTESIZE_SRC = """\
'use strict';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/**
 * Format a byte count with binary units: 512 -> "512 B", 1536 -> "1.5 KiB".
 */
function formatBytes(bytes) {
  if (!Number.isFinite(bytes) || bytes < 0) {
    throw new RangeError(`expected a non-negative number of bytes, got ${bytes}`);
  }
  let value = bytes;
  let unit = 0;
  while (value > 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

module.exports = { formatBytes };
"""

BYTESIZE_TEST = """\
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { formatBytes } = require('..');

test('small sizes stay in bytes', () => {
  assert.strictEqual(formatBytes(512), '512 B');
});

test('uses one decimal for larger units', () => {
  assert.strictEqual(formatBytes(1536), '1.5 KiB');
  assert.strictEqual(formatBytes(2 * 1024 * 1024), '2.0 MiB');
});

test('exactly 1024 bytes is one KiB', () => {
  assert.strictEqual(formatBytes(1024), '1.0 KiB');
});

test('rejects negative sizes', () => {
  assert.throws(() => formatBytes(-1), RangeError);
});
"""

BYTESIZE_FIX = (
    "  while (value > 1024 && unit < UNITS.length - 1) {\n",
    "  while (value >= 1024 && unit < UNITS.length - 1) {\n",
)

_BYTESIZE_NAMES = [
    "small sizes stay in bytes",
    "uses one decimal for larger units",
    "exactly 1024 bytes is one KiB",
    "rejects negative sizes",
]

BYTESIZE = Story(
    fmt="atif",
    sample="atif/bytesize-repair.trajectory.json",
    cwd=BYTESIZE_CWD,
    command="node --test",
    argv=("node", "--test"),
    start={
        "package.json": BYTESIZE_PACKAGE,
        "index.js": BYTESIZE_SRC,
        "test/format.test.js": BYTESIZE_TEST,
    },
    final={
        "package.json": BYTESIZE_PACKAGE,
        "index.js": replace_once(BYTESIZE_SRC, *BYTESIZE_FIX),
        "test/format.test.js": BYTESIZE_TEST,
    },
    fail_output=tap_report(
        list(zip(_BYTESIZE_NAMES, ["0.802656", "0.113019", "0.910718", "0.244725"], strict=True)),
        {
            "name": "exactly 1024 bytes is one KiB",
            "location": f"{BYTESIZE_CWD}/test/format.test.js:16:1",
            "frame": f"{BYTESIZE_CWD}/test/format.test.js:17:10",
            "actual": "1024 B",
            "expected": "1.0 KiB",
        },
        "73.662159",
    ),
    pass_output=tap_report(
        list(zip(_BYTESIZE_NAMES, ["0.79102", "0.120334", "0.071568", "0.205511"], strict=True)),
        None,
        "71.240871",
    ),
    request=(
        "Start a little Node package, bytesize, with a `formatBytes(bytes)` helper: binary units "
        "(B, KiB, MiB, GiB, TiB), one decimal place above plain bytes, and a RangeError for "
        "negative input. Cover it with node:test tests and check with `node --test`."
    ),
)

STORIES: dict[str, Story] = {s.fmt: s for s in (INVOICE, SLUGIFY, WORDSTATS, BYTESIZE)}


# --------------------------------------------------------------------------
# 1. Claude Code transcript (~/.claude/projects/<project>/<session>.jsonl)
# --------------------------------------------------------------------------


def claude_code(story: Story) -> str:
    version, model, branch = "2.1.34", "claude-opus-4-6", "main"
    session = Path(story.sample).stem
    clock = Clock(datetime(2026, 3, 3, 14, 7, 12, 408000, tzinfo=UTC))
    lines: list[dict] = []
    parent: str | None = None
    slug = "tidy-rolling-ledger"

    def base(label: str, with_slug: bool = True) -> dict:
        nonlocal parent
        line = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": story.cwd,
            "sessionId": session,
            "version": version,
            "gitBranch": branch,
        }
        if with_slug:
            line["slug"] = slug
        parent = uid(f"{session}/{label}")
        return line

    def usage(fresh: int, read: int, created: int, out: int) -> dict:
        return {
            "input_tokens": fresh,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0,
                "ephemeral_1h_input_tokens": created,
            },
            "output_tokens": out,
            "service_tier": "standard",
            "inference_geo": "not_available",
        }

    def assistant(label: str, msg: str, part: dict, use: dict, stop=None, seconds=1.4) -> str:
        line = base(label, with_slug=bool(lines) and label != "a1-text")
        line.update(
            {
                "message": {
                    "model": model,
                    "id": "msg_01" + token(f"{session}/{msg}", 22),
                    "type": "message",
                    "role": "assistant",
                    "content": [part],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": use,
                },
                "requestId": "req_011C" + token(f"{session}/{msg}/req", 20),
                "type": "assistant",
                "uuid": parent,
                "timestamp": clock.tick(seconds),
            }
        )
        lines.append(line)
        return parent

    def result(label: str, call: str, source: str, content: str, tool_result, error=None):
        line = base(label)
        block = {"tool_use_id": call, "type": "tool_result", "content": content}
        if error is not None:
            block["is_error"] = error
        line.update(
            {
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "uuid": parent,
                "timestamp": clock.tick(0.6),
                "toolUseResult": tool_result,
                "sourceToolAssistantUUID": source,
            }
        )
        lines.append(line)

    def call_id(label: str) -> str:
        return "toolu_01" + token(f"{session}/{label}", 22)

    # The prompt, with the bookkeeping line Claude Code writes before it.
    prompt_uuid = uid(f"{session}/prompt")
    lines.append(
        {
            "type": "file-history-snapshot",
            "messageId": prompt_uuid,
            "snapshot": {
                "messageId": prompt_uuid,
                "trackedFileBackups": {},
                "timestamp": clock.iso(),
            },
            "isSnapshotUpdate": False,
        }
    )
    prompt = base("prompt", with_slug=False)
    prompt.update(
        {
            "type": "user",
            "message": {"role": "user", "content": story.request},
            "uuid": parent,
            "timestamp": clock.tick(0.02),
            "thinkingMetadata": {"maxThinkingTokens": 31999},
            "todos": [],
            "permissionMode": "acceptEdits",
        }
    )
    lines.append(prompt)

    # Turn 1: one response that writes the three files.
    first = usage(3, 18338, 7214, 11)
    assistant(
        "a1-text",
        "m1",
        {
            "type": "text",
            "text": "I'll create an `invoice` package with the totals module, export it from "
            "`__init__.py`, and add a unittest suite under `tests/`.",
        },
        first,
        seconds=2.9,
    )
    writes = []
    for index, path in enumerate(story.start):
        call = call_id(f"write-{path}")
        absolute = f"{story.cwd}/{path}"
        done = index == 2
        source = assistant(
            f"a1-write-{path}",
            "m1",
            {
                "type": "tool_use",
                "id": call,
                "name": "Write",
                "input": {"file_path": absolute, "content": story.start[path]},
            },
            usage(3, 18338, 7214, 1187 if done else 11),
            stop="tool_use" if done else None,
            seconds=6.8 if index == 0 else 1.1,
        )
        writes.append((path, call, source, absolute))
    for path, call, source, absolute in writes:
        result(
            f"r-write-{path}",
            call,
            source,
            f"File created successfully at: {absolute}",
            {
                "type": "create",
                "filePath": absolute,
                "content": story.start[path],
                "structuredPatch": [],
                "originalFile": None,
            },
        )

    # Turn 2: run the tests; one fails.
    bash_input = {"command": story.command, "description": "Run the invoice unit tests"}
    run1 = call_id("bash-1")
    source = assistant(
        "a2-bash",
        "m2",
        {"type": "tool_use", "id": run1, "name": "Bash", "input": bash_input},
        usage(1, 25552, 1301, 96),
        stop="tool_use",
        seconds=2.7,
    )
    failed = story.fail_output.rstrip("\n")
    result(
        "r-bash-1",
        run1,
        source,
        f"Exit code 1\n{failed}",
        f"Error: Exit code 1\n{failed}",
        error=True,
    )

    # Turn 3: explain and fix the bug.
    old, new = INVOICE_FIX
    assistant(
        "a3-text",
        "m3",
        {
            "type": "text",
            "text": "One failure: `tax_rate` is documented as a percentage, but `invoice_total` "
            "multiplies the subtotal by it directly, so 20 % is applied as x20 (24.99 + 499.80 "
            "= 524.79). The tax has to be divided by 100.",
        },
        usage(1, 26853, 512, 9),
        seconds=4.1,
    )
    edit = call_id("edit-1")
    path = "invoice/totals.py"
    absolute = f"{story.cwd}/{path}"
    source = assistant(
        "a3-edit",
        "m3",
        {
            "type": "tool_use",
            "id": edit,
            "name": "Edit",
            "input": {
                "replace_all": False,
                "file_path": absolute,
                "old_string": old.rstrip("\n"),
                "new_string": new.rstrip("\n"),
            },
        },
        usage(1, 26853, 512, 254),
        stop="tool_use",
        seconds=1.9,
    )
    result(
        "r-edit-1",
        edit,
        source,
        f"The file {absolute} has been updated successfully.",
        {
            "filePath": absolute,
            "oldString": old.rstrip("\n"),
            "newString": new.rstrip("\n"),
            "originalFile": story.start[path],
            "structuredPatch": [
                {"oldStart": a, "oldLines": b, "newStart": c, "newLines": d, "lines": body}
                for a, b, c, d, body in unified_hunks(story.start[path], story.final[path], 3)
            ],
            "userModified": False,
            "replaceAll": False,
        },
    )

    # Turn 4: the same command again; it passes.
    run2 = call_id("bash-2")
    source = assistant(
        "a4-bash",
        "m4",
        {"type": "tool_use", "id": run2, "name": "Bash", "input": bash_input},
        usage(1, 27365, 389, 94),
        stop="tool_use",
        seconds=2.3,
    )
    passed = story.pass_output.rstrip("\n")
    result(
        "r-bash-2",
        run2,
        source,
        passed,
        {"stdout": passed, "stderr": "", "interrupted": False, "isImage": False},
        error=False,
    )

    assistant(
        "a5-text",
        "m5",
        {
            "type": "text",
            "text": "All 5 tests pass.\n\n"
            "- `invoice/totals.py`: `line_total(quantity, unit_price)` and "
            "`invoice_total(lines, tax_rate=0)`, using `Decimal` and rounding half-up to the "
            "cent; `tax_rate` is a percentage.\n"
            "- `invoice/__init__.py`: re-exports both functions.\n"
            "- `tests/test_totals.py`: 5 unittest cases, run with "
            f"`{story.command}`.",
        },
        usage(1, 27754, 402, 118),
        stop="end_turn",
        seconds=3.6,
    )
    return jsonl(lines)


# --------------------------------------------------------------------------
# 2. Codex rollout (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)
# --------------------------------------------------------------------------


def add_file_patch(files: dict[str, str]) -> str:
    parts = ["*** Begin Patch"]
    for path, content in files.items():
        parts.append(f"*** Add File: {path}")
        parts += ["+" + line for line in content.splitlines()]
    parts.append("*** End Patch")
    return "\n".join(parts) + "\n"


def update_file_patch(path: str, old: str, new: str) -> str:
    parts = ["*** Begin Patch", f"*** Update File: {path}"]
    for *_, body in unified_hunks(old, new, 1):
        parts += ["@@", *body]
    parts.append("*** End Patch")
    return "\n".join(parts) + "\n"


CODEX_PERMISSIONS = """\
<permissions instructions>
Filesystem sandboxing defines which files can be read or written. `sandbox_mode` is \
`workspace-write`: The sandbox permits reading files, and editing files in `cwd` and \
`writable_roots`. Network access is restricted.
</permissions instructions>"""

CODEX_ENVIRONMENT = """\
<environment_context>
  <cwd>{cwd}</cwd>
  <shell>bash</shell>
  <current_date>2026-03-02</current_date>
  <timezone>Etc/UTC</timezone>
</environment_context>"""


def codex(story: Story) -> str:
    start = datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC)
    session = uuid7("codex/slugify/session", start)
    turn = uuid7("codex/slugify/turn-1", start + timedelta(milliseconds=2460))
    model, cli = "gpt-5.2-codex", "0.106.0"
    clock = Clock(start)
    lines: list[dict] = []
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    total["reasoning_output_tokens"] = 0
    total["total_tokens"] = 0

    def emit(kind: str, payload: dict, seconds: float = 0.001) -> None:
        lines.append({"timestamp": clock.tick(seconds), "type": kind, "payload": payload})

    def tokens(fresh: int, cached: int, out: int, reasoning: int) -> None:
        last = {
            "input_tokens": fresh + cached,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
            "total_tokens": fresh + cached + out,
        }
        for key, value in last.items():
            total[key] += value
        info = {
            "total_token_usage": dict(total),
            "last_token_usage": last,
            "model_context_window": 258400,
        }
        emit("event_msg", {"type": "token_count", "info": info, "rate_limits": None}, 0.09)

    def reasoning(label: str, summary: str | None, seconds: float) -> None:
        blob = "gAAAAABp" + token(f"{session}/{label}", 240, BASE62 + "-_")
        emit(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": summary}] if summary else [],
                "content": None,
                "encrypted_content": blob,
            },
            seconds,
        )

    def say(text: str, phase: str, seconds: float) -> None:
        emit(
            "event_msg",
            {"type": "agent_message", "message": text, "phase": phase, "memory_citation": None},
            seconds,
        )
        emit(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
                "phase": phase,
            },
            0.005,
        )

    def apply_patch(
        label: str,
        patch: str,
        changes: dict,
        summary: str,
        seconds: float,
        usage: tuple[int, int, int, int],
    ) -> None:
        call = "call_" + token(f"{session}/{label}", 24)
        emit(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call,
                "name": "apply_patch",
                "input": patch,
            },
            seconds,
        )
        tokens(*usage)
        out = f"Success. Updated the following files:\n{summary}"
        emit(
            "event_msg",
            {
                "type": "patch_apply_end",
                "call_id": call,
                "turn_id": turn,
                "stdout": out,
                "stderr": "",
                "success": True,
                "changes": changes,
                "status": "completed",
            },
            0.21,
        )
        emit(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": call,
                "output": json.dumps(
                    {"output": out, "metadata": {"exit_code": 0, "duration_seconds": 0.0}}
                ),
            },
            0.002,
        )

    def run(
        label: str,
        output: str,
        code: int,
        wall: float,
        seconds: float,
        usage: tuple[int, int, int, int],
    ) -> None:
        call = "call_" + token(f"{session}/{label}", 24)
        args = {
            "cmd": story.command,
            "workdir": story.cwd,
            "yield_time_ms": 10000,
            "max_output_tokens": 12000,
        }
        emit(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps(args),
                "call_id": call,
            },
            seconds,
        )
        tokens(*usage)
        emit(
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": call,
                "process_id": str(40000 + int(token(label, 4, "0123456789"))),
                "turn_id": turn,
                "command": ["/bin/bash", "-lc", story.command],
                "cwd": story.cwd,
                "parsed_cmd": [{"type": "unknown", "cmd": story.command}],
                "source": "unified_exec_startup",
                "stdout": "",
                "stderr": "",
                "aggregated_output": output,
                "exit_code": code,
                "duration": {"secs": int(wall), "nanos": round((wall % 1) * 1e9)},
                "formatted_output": "",
                "status": "completed" if code == 0 else "failed",
            },
            wall,
        )
        text = (
            f"Chunk ID: {token(label + '/chunk', 6, '0123456789abcdef')}\n"
            f"Wall time: {wall:.4f} seconds\n"
            f"Process exited with code {code}\n"
            f"Original token count: {len(output) // 4}\n"
            f"Output:\n{output}"
        )
        emit(
            "response_item",
            {"type": "function_call_output", "call_id": call, "output": text},
            0.004,
        )

    emit(
        "session_meta",
        {
            "id": session,
            "timestamp": clock.iso(),
            "cwd": story.cwd,
            "originator": "codex_cli_rs",
            "cli_version": cli,
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {
                "text": "You are Codex, a coding agent based on GPT-5. You and the user share "
                "one workspace, and your job is to collaborate with them until their goal is "
                "genuinely handled."
            },
        },
        2.45,
    )
    emit(
        "event_msg",
        {
            "type": "task_started",
            "turn_id": turn,
            "started_at": int(clock.now.timestamp()),
            "model_context_window": 258400,
            "collaboration_mode_kind": "default",
        },
    )
    emit(
        "response_item",
        {
            "type": "message",
            "role": "developer",
            "content": [
                {
                    "type": "input_text",
                    "text": CODEX_PERMISSIONS,
                }
            ],
        },
    )
    emit(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": CODEX_ENVIRONMENT.format(cwd=story.cwd),
                }
            ],
        },
    )
    emit(
        "turn_context",
        {
            "turn_id": turn,
            "cwd": story.cwd,
            "current_date": "2026-03-02",
            "timezone": "Etc/UTC",
            "approval_policy": "on-request",
            "sandbox_policy": {
                "type": "workspace-write",
                "network_access": False,
                "exclude_tmpdir_env_var": False,
                "exclude_slash_tmp": False,
            },
            "model": model,
            "personality": "pragmatic",
            "effort": "medium",
            "summary": "auto",
            "truncation_policy": {"mode": "tokens", "limit": 10000},
        },
    )
    emit(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": story.request}],
        },
    )
    emit(
        "event_msg",
        {
            "type": "user_message",
            "message": story.request,
            "images": [],
            "local_images": [],
            "text_elements": [],
        },
    )

    reasoning("r1", None, 3.2)
    say(
        "I'll scaffold `package.json` with an `npm test` script that runs `node --test`, the "
        "`slugify` module, and a node:test suite, then run the tests.",
        "commentary",
        0.3,
    )
    apply_patch(
        "patch-1",
        add_file_patch(story.start),
        {
            f"{story.cwd}/{path}": {"type": "add", "content": content}
            for path, content in story.start.items()
        },
        "".join(f"A {path}\n" for path in story.start),
        9.6,
        (9210, 0, 742, 168),
    )
    run("run-1", story.fail_output, 1, 0.4127, 2.1, (1102, 9088, 61, 0))

    reasoning(
        "r2",
        "**Spotting the missing global flag**\n\nOnly the first whitespace run became a "
        "hyphen: the second `replace` has no `g` flag.",
        2.8,
    )
    say(
        "`joins every word of a longer title` fails with `'node-test runner basics'`: the "
        "whitespace regex has no `g` flag, so only the first gap is replaced. Adding it.",
        "commentary",
        0.2,
    )
    path = "src/slugify.js"
    old, new = story.start[path], story.final[path]
    diff = "".join(
        f"@@ -{a},{b} +{c},{d} @@\n" + "".join(line + "\n" for line in body)
        for a, b, c, d, body in unified_hunks(old, new, 1)
    )
    apply_patch(
        "patch-2",
        update_file_patch(path, old, new),
        {f"{story.cwd}/{path}": {"type": "update", "unified_diff": diff, "move_path": None}},
        f"M {path}\n",
        2.4,
        (1507, 10112, 148, 52),
    )
    run("run-2", story.pass_output, 0, 0.3818, 1.7, (214, 11520, 34, 0))

    final = (
        "Created a dependency-free `slugify` package:\n\n"
        "- `package.json`: `npm test` runs `node --test`.\n"
        "- `src/slugify.js`: lower-cases, drops anything but ASCII letters, digits, spaces "
        "and hyphens, and joins words with single hyphens.\n"
        "- `test/slugify.test.js`: 4 node:test cases.\n\n"
        "The first run caught a missing `g` flag on the whitespace regex; after the fix "
        "`npm test` passes 4/4."
    )
    tokens(1381, 11648, 97, 0)
    say(final, "final_answer", 2.6)
    emit(
        "event_msg",
        {
            "type": "task_complete",
            "turn_id": turn,
            "last_agent_message": final,
            "completed_at": int(clock.now.timestamp()),
            "duration_ms": int((clock.now - start).total_seconds() * 1000) - 2450,
            "time_to_first_token_ms": 3214,
        },
        0.05,
    )
    return jsonl(lines)


# --------------------------------------------------------------------------
# 3. pi session, v1 linear layout (~/.pi/agent/sessions/<cwd>/<time>_<id>.jsonl)
# --------------------------------------------------------------------------

# claude-opus-4-5, dollars per million tokens, as pi prices it.
PI_PRICES = {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25}


def pi_edit_diff(old: str, new: str) -> str:
    """pi's edit-result diff: numbered lines, four of context, elisions as '...'."""
    a, b = old.splitlines(), new.splitlines()
    width = len(str(max(len(a), len(b))))
    out = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(4):
        if group[0][1] > 0:
            out.append(" " * (width + 2) + "...")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [f" {n + 1:>{width}} {a[n]}" for n in range(a1, a2)]
                continue
            out += [f"-{n + 1:>{width}} {a[n]}" for n in range(a1, a2)]
            out += [f"+{n + 1:>{width}} {b[n]}" for n in range(b1, b2)]
        if group[-1][2] < len(a):
            out.append(" " * (width + 2) + "...")
    return "\n".join(out)


def pi(story: Story) -> str:
    session = Path(story.sample).stem.split("_", 1)[1]
    clock = Clock(datetime(2026, 3, 4, 15, 21, 7, 402000, tzinfo=UTC))
    lines: list[dict] = [
        {
            "type": "session",
            "id": session,
            "timestamp": clock.iso(),
            "cwd": story.cwd,
            "provider": "anthropic",
            "modelId": "claude-opus-4-5",
            "thinkingLevel": "off",
        }
    ]
    files = dict(story.start)

    def message(body: dict, seconds: float) -> None:
        lines.append({"type": "message", "timestamp": clock.tick(seconds), "message": body})

    def assistant(
        parts: list[dict], fresh: int, read: int, write: int, out: int, stop: str, seconds: float
    ) -> None:
        started = clock.millis()
        cost = {
            "input": fresh * PI_PRICES["input"] / 1e6,
            "output": out * PI_PRICES["output"] / 1e6,
            "cacheRead": read * PI_PRICES["cacheRead"] / 1e6,
            "cacheWrite": write * PI_PRICES["cacheWrite"] / 1e6,
        }
        # Added left to right, as pi does (and as sum() no longer does since 3.12).
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        message(
            {
                "role": "assistant",
                "content": parts,
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-opus-4-5",
                "usage": {
                    "input": fresh,
                    "output": out,
                    "cacheRead": read,
                    "cacheWrite": write,
                    "totalTokens": fresh + out + read + write,
                    "cost": cost,
                },
                "stopReason": stop,
                "timestamp": started,
            },
            seconds,
        )

    def tool_result(call: str, name: str, text: str, error: bool, details=None) -> None:
        body = {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            body["details"] = details
        body["isError"] = error
        body["timestamp"] = clock.millis() + 2
        message(body, 0.004)

    def call(label: str, name: str, arguments: dict) -> dict:
        ident = "toolu_01" + token(f"{session}/{label}", 22)
        return {"type": "toolCall", "id": ident, "name": name, "arguments": arguments}

    message(
        {
            "role": "user",
            "content": [{"type": "text", "text": story.request}],
            "timestamp": clock.millis() - 4,
        },
        0.0,
    )

    writes = [
        call(f"write-{path}", "write", {"path": f"{story.cwd}/{path}", "content": content})
        for path, content in story.start.items()
    ]
    intro = {"type": "text", "text": "I'll write the module and its tests, then run them."}
    assistant([intro, *writes], 3, 0, 5120, 1342, "toolUse", 21.4)
    for part in writes:
        path = part["arguments"]["path"]
        size = len(part["arguments"]["content"].encode())
        tool_result(part["id"], "write", f"Successfully wrote {size} bytes to {path}", False)

    run1 = call("bash-1", "bash", {"command": story.command})
    assistant([run1], 1, 5120, 1431, 74, "toolUse", 2.6)
    tool_result(run1["id"], "bash", story.fail_output + "\n\nCommand exited with code 1", True, {})

    path = "wordstats.py"
    absolute = f"{story.cwd}/{path}"
    look = call("read-1", "read", {"path": absolute})
    note = {
        "type": "text",
        "text": "`test_ties_are_alphabetical` fails: `Counter.most_common` keeps insertion "
        'order for equal counts, so "pear" (seen first) comes before "apple". Let me look '
        "at `top_words` again.",
    }
    assistant([note, look], 1, 6551, 683, 112, "toolUse", 4.9)
    tool_result(look["id"], "read", files[path], False)

    old, new = WORDSTATS_FIX
    fix = call(
        "edit-1",
        "edit",
        {"path": absolute, "oldText": old.rstrip("\n"), "newText": new.rstrip("\n")},
    )
    lead = {"type": "text", "text": "Sorting by (-count, word) gives the documented order:"}
    assistant([lead, fix], 1, 7234, 402, 198, "toolUse", 3.8)
    files[path] = replace_once(files[path], old, new)
    assert files == story.final
    tool_result(
        fix["id"],
        "edit",
        f"Successfully replaced text in {absolute}. Changed {len(old.rstrip())} characters "
        f"to {len(new.rstrip())} characters.",
        False,
        {"diff": pi_edit_diff(story.start[path], story.final[path])},
    )

    run2 = call("bash-2", "bash", {"command": story.command})
    assistant([run2], 1, 7636, 318, 70, "toolUse", 2.2)
    tool_result(run2["id"], "bash", story.pass_output, False)

    done = {
        "type": "text",
        "text": "All 6 tests pass. `wordstats.py` has `words`, `word_count` and `top_words`; "
        "`top_words` now sorts by descending count and then alphabetically, which the first "
        "run showed `most_common` alone doesn't do for ties.",
    }
    assistant([done], 1, 7954, 361, 63, "stop", 3.1)
    return jsonl(lines)


# --------------------------------------------------------------------------
# 4. ATIF-v1.7 trajectory (Harbor's format)
# --------------------------------------------------------------------------

ATIF_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the project directory. The result is the "
            "combined stdout and stderr, preceded by an 'Exit code N' line.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or overwrite a file with the given content.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
]


def atif(story: Story) -> str:
    clock = Clock(datetime(2026, 3, 5, 9, 42, 18, 115000, tzinfo=UTC))
    model = "claude-sonnet-4-5"
    steps: list[dict] = []
    totals = {"prompt": 0, "completion": 0, "cached": 0}

    def step(source: str, message: str, seconds: float, **more) -> dict:
        entry = {"step_id": len(steps) + 1, "timestamp": clock.tick(seconds), "source": source}
        if source == "agent":
            entry["model_name"] = model
        entry["message"] = message
        entry.update(more)
        if "metrics" in more:
            totals["prompt"] += more["metrics"]["prompt_tokens"]
            totals["completion"] += more["metrics"]["completion_tokens"]
            totals["cached"] += more["metrics"]["cached_tokens"]
        steps.append(entry)
        return entry

    def metrics(prompt: int, cached: int, completion: int) -> dict:
        return {"prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached}

    def write(label: str, path: str, content: str) -> tuple[dict, dict]:
        call = "call_" + token(f"atif/bytesize/{label}", 24)
        absolute = f"{story.cwd}/{path}"
        return (
            {
                "tool_call_id": call,
                "function_name": "write_file",
                "arguments": {"path": absolute, "content": content},
            },
            {
                "source_call_id": call,
                "content": f"Wrote {len(content.encode())} bytes to {absolute}",
            },
        )

    def bash(label: str, output: str, code: int) -> tuple[dict, dict]:
        call = "call_" + token(f"atif/bytesize/{label}", 24)
        return (
            {
                "tool_call_id": call,
                "function_name": "bash",
                "arguments": {"command": story.command},
            },
            {
                "source_call_id": call,
                "content": f"Exit code {code}\n{output}",
                "extra": {"exit_code": code},
            },
        )

    step(
        "system",
        "You are a careful coding agent working in "
        f"{story.cwd}. Use the bash and write_file tools; run the project's tests before "
        "you finish.",
        0.0,
    )
    step("user", story.request, 0.01)

    made = [write(f"write-{path}", path, content) for path, content in story.start.items()]
    step(
        "agent",
        "I'll add package.json with a `node --test` script, the `formatBytes` "
        "implementation in index.js, and tests in test/format.test.js.",
        11.7,
        tool_calls=[c for c, _ in made],
        observation={"results": [r for _, r in made]},
        metrics=metrics(2414, 0, 1036),
        llm_call_count=1,
    )

    c, r = bash("bash-1", story.fail_output, 1)
    step(
        "agent",
        "Running the test suite.",
        3.4,
        tool_calls=[c],
        observation={"results": [r]},
        metrics=metrics(3561, 2414, 58),
        llm_call_count=1,
    )

    c, r = write("write-fix", "index.js", story.final["index.js"])
    step(
        "agent",
        "`formatBytes(1024)` returned '1024 B': the loop only moves to the next "
        "unit while the value is strictly greater than 1024, so exactly 1024 stays in bytes. "
        "It should be `>=`.",
        6.2,
        reasoning_content="The boundary case fails; 1536 and 2 MiB pass because they are "
        "above the threshold. Change the comparison, keep everything else.",
        tool_calls=[c],
        observation={"results": [r]},
        metrics=metrics(4419, 3561, 402),
        llm_call_count=1,
    )

    c, r = bash("bash-2", story.pass_output, 0)
    step(
        "agent",
        "",
        2.9,
        tool_calls=[c],
        observation={"results": [r]},
        metrics=metrics(4905, 4419, 41),
        llm_call_count=1,
    )

    step(
        "agent",
        "Done. `formatBytes` formats sizes with binary units and one decimal place "
        "above bytes and rejects negative input; `node --test` passes all 4 tests after "
        "fixing the 1024-byte boundary (`>` -> `>=`).",
        3.8,
        metrics=metrics(5722, 4905, 77),
        llm_call_count=1,
    )

    doc = {
        "schema_version": "ATIF-v1.7",
        "session_id": uid("atif/bytesize/session"),
        "trajectory_id": "bytesize-repair",
        "agent": {
            "name": "generic-agent",
            "version": "0.9.2",
            "model_name": model,
            "tool_definitions": ATIF_TOOLS,
            "extra": {"cwd": story.cwd},
        },
        "steps": steps,
        "notes": "Sample trajectory bundled with traj2env: add a helper, a failing check, "
        "a fix, the same check passing.",
        "final_metrics": {
            "total_prompt_tokens": totals["prompt"],
            "total_completion_tokens": totals["completion"],
            "total_cached_tokens": totals["cached"],
            "total_steps": len(steps),
        },
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------

WRITERS = {"claude-code": claude_code, "codex": codex, "pi": pi, "atif": atif}


def build() -> dict[str, str]:
    """Every sample file: path relative to samples/ -> text."""
    return {story.sample: WRITERS[fmt](story) for fmt, story in STORIES.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale samples")
    args = parser.parse_args(argv)
    stale = []
    for relative, text in build().items():
        target = HERE / relative
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(relative)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    for relative in stale:
        print(("stale: " if args.check else "wrote: ") + relative)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
