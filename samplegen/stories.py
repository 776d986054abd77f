"""The four repair stories, one per sample: the project's files around the failing and the
passing check, what the check printed each time, and the user's request.

Each story is told by one agent format's writer (``claude_code``, ``codex``, ``pi``,
``atif``); the tests hold the written logs to the story.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from .ids import uid, uuid7
from .outputs import tap_report, unittest_verbose
from .text import replace_once


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
