"""Controls of the tasks scored by a share of their hidden tests (build and extend).

A grader that divides the tests that passed by the tests that *ran* gives full marks to a
project whose modules skip every test when imported; ours counts a skipped test as one that did
not pass, against the denominator fixed when the task was verified. The generic catalogue's
controls run too; for these families their sources include the modules the agent would create
(``family_sources``: the reference's non-test sources), so a forgery has somewhere to live even
in an empty starting folder.
"""

from __future__ import annotations

import json

from ..plan import test_files
from ..taskdir import TaskSpec
from .base import Control, source_files
from .shell import append_to_sources

FRACTION_FAMILIES = frozenset({"build", "extend"})
_PY_SKIP = """
import unittest as _t2e_unittest
raise _t2e_unittest.SkipTest("traj2env control: every test skipped")
"""

SKIP_EVERY_TEST = Control(
    name="skip_every_test",
    description="every module the tests import (the project's, and the ones the task asks "
    "for) skips the test importing it: nothing fails, nothing passes",
    shell=append_to_sources({".py": _PY_SKIP}),
    languages=frozenset({"python"}),
    needs="sources",
)

CONTROLS: tuple[Control, ...] = (SKIP_EVERY_TEST,)


def family_sources(spec: TaskSpec) -> list[str]:
    """The reference's non-test sources of the task's language (none unless build or extend)."""
    if spec.family not in FRACTION_FAMILIES:
        return []
    try:
        paths = json.loads(spec.tests_files["grading.json"].data).get("reference_paths") or []
    except (KeyError, ValueError):
        return []
    listed = dict.fromkeys(str(p) for p in paths)
    return source_files(listed, spec.language, set(test_files(listed)))
