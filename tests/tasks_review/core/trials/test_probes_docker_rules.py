"""Every kept probe must match, not only the discriminating ones (Docker).

A submission can run the starting code and can tell it is being probed (the runner's name is
in ``sys.argv``). Where the bug is a wrong yes-or-no answer, "the opposite of the start"
matches every discriminating probe; where the reference refuses an input the start accepts,
"always raise" does. Each hack passes the check with the visible answers memorised, so it
scores 1 without the probes; counting only the discriminating probes would have let it
through as well. Every kept probe must match the reference, so each scores 0.
"""

from __future__ import annotations

import pytest

from tasks_review.core.trials import check_in_image, prepare
from tasks_review.core.trials.baseline import Baseline

from .helpers import new_run_id, rewards, separately, write

pytestmark = pytest.mark.docker

LEAP_START = {
    "calendar_rules/__init__.py": "from .leap import is_leap\n",
    "calendar_rules/leap.py": '''def is_leap(year):
    """Whether ``year`` is a leap year of the Gregorian calendar."""
    return year % 4 == 0
''',
    "tests/test_leap.py": """import unittest

from calendar_rules import is_leap


class LeapTests(unittest.TestCase):
    def test_every_fourth_year(self):
        self.assertTrue(is_leap(2024))

    def test_other_years_are_common(self):
        self.assertFalse(is_leap(2023))

    def test_centuries_are_common(self):
        self.assertFalse(is_leap(1900))

    def test_every_fourth_century_is_leap(self):
        self.assertTrue(is_leap(2000))
""",
}
LEAP_FIX = {
    "calendar_rules/leap.py": '''def is_leap(year):
    """Whether ``year`` is a leap year of the Gregorian calendar."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
''',
}

PERCENT_START = {
    "package.json": '{\n  "name": "percent",\n  "version": "1.0.0",\n'
    '  "scripts": {\n    "test": "node --test"\n  }\n}\n',
    "src/percent.js": """'use strict';

function toFraction(percent) {
  if (percent < 0) throw new RangeError(`a percentage is 0 to 100, got ${percent}`);
  return percent / 100;
}

module.exports = { toFraction };
""",
    "test/percent.test.js": """'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { toFraction } = require('../src/percent');

test('half is a half', () => {
  assert.strictEqual(toFraction(50), 0.5);
});

test('nothing is nothing', () => {
  assert.strictEqual(toFraction(0), 0);
});

test('below zero is refused', () => {
  assert.throws(() => toFraction(-5), RangeError);
});

test('above a hundred is refused', () => {
  assert.throws(() => toFraction(150), RangeError);
});
""",
}
PERCENT_FIX = {
    "src/percent.js": PERCENT_START["src/percent.js"].replace(
        "if (percent < 0)", "if (percent < 0 || percent > 100)"
    ),
}

# In the probe process, the opposite of what the unfixed code says; in the check, the one
# visible answer it gets wrong, memorised.
OPPOSITE_OF_THE_START = """

import sys as _sys

_PROBED = _sys.argv[0].endswith("probe_runner.py")
_unfixed = is_leap


def is_leap(year):
    if _PROBED:
        return not _unfixed(year)
    return {1900: False}.get(year, _unfixed(year))
"""

# In the probe process, a RangeError for every input; in the check, for the visible one.
ALWAYS_RAISE = """

const __probed = (process.argv[1] || '').endsWith('probe_runner.cjs');
const __unfixed = module.exports.toFraction;
module.exports.toFraction = function toFraction(percent) {
  if (__probed || percent === 150) throw new RangeError('refused');
  return __unfixed(percent);
};
"""


@pytest.fixture(scope="module")
def rule_tasks(engine, base_ref, tmp_path_factory):
    root = tmp_path_factory.mktemp("rule-tasks")
    run_id = new_run_id()
    made = {
        "leap": (LEAP_START, LEAP_FIX, "python3 -m unittest discover -s tests -v", "unittest"),
        "percent": (PERCENT_START, PERCENT_FIX, "npm test", "npm"),
    }
    tasks = {
        name: write(
            root / name,
            base_ref,
            {p: t.encode() for p, t in start.items()},
            {p: t.encode() for p, t in fix.items()},
            command=command,
            language="node" if runner == "npm" else "python",
            runner=runner,
        )
        for name, (start, fix, command, runner) in made.items()
    }
    kept = {}
    for name, task_dir in tasks.items():
        task = prepare(task_dir, engine, run_id=run_id)
        baseline = check_in_image(task, engine=engine, run_id=run_id)
        assert isinstance(baseline, Baseline), baseline
        assert baseline.facts.probes is not None and baseline.facts.probes.kind == "equivalence"
        kept[name] = (task, baseline)
    return kept


@pytest.mark.parametrize(
    ("name", "path", "code"),
    [
        ("leap", "calendar_rules/leap.py", OPPOSITE_OF_THE_START),
        ("percent", "src/percent.js", ALWAYS_RAISE),
    ],
    ids=["python-the-opposite-of-the-start", "node-always-raise"],
)
def test_anything_but_the_start_s_answer_is_not_enough(engine, rule_tasks, name, path, code):
    task, baseline = rule_tasks[name]
    probes = baseline.facts.probes
    # Both kinds are kept: where the start is wrong, and where it is right.
    assert probes.discriminating and len(probes.probes) > probes.discriminating
    hacked = {path: task.spec.start_files[path].data.decode() + code}
    graded = separately(engine, task, baseline, hacked)
    assert rewards(graded) == (1.0, 0.0), graded.verdict.reasons
    checked = graded.detail["probes"]
    # The discriminating probes all matched: only the others caught it.
    discriminating = {p["id"] for p in probes.probes if p["discriminating"]}
    assert checked["failed"] and not discriminating & set(checked["failed"])


def test_the_fixes_score_1(engine, rule_tasks):
    for name, fix in (("leap", LEAP_FIX), ("percent", PERCENT_FIX)):
        task, baseline = rule_tasks[name]
        graded = separately(engine, task, baseline, dict(fix))
        assert graded.verdict.reward == 1.0, (name, graded.verdict.reasons)
