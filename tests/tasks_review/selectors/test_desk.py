"""What the candidate page shows of the fix: diffs within the display limits the stepper uses,
and the starting files as a tree in a person's order with the touched files marked."""

from __future__ import annotations

import pytest

from tasks_review.selectors.desk import reference_changes, start_tree
from tests.tasks_review.factories import make_candidate
from trajectories.display import MAX_DIFF_FILES

pytestmark = pytest.mark.django_db


def test_the_reference_diff_shows_the_first_files_and_counts_the_rest():
    n = MAX_DIFF_FILES + 3
    start = {f"src/m{i}.py": b"x = 0\n" for i in range(n)}
    fix = {f"src/m{i}.py": b"x = 1\n" for i in range(n)}
    changes, rest = reference_changes(make_candidate(start=start, fix=fix))
    assert len(changes) == MAX_DIFF_FILES and rest == 3
    assert all(c.change == "modified" and (c.added, c.removed) == (1, 1) for c in changes)
    assert '<span class="gi">+x = 1</span>' in changes[0].html


def test_added_and_deleted_files_are_diffed_against_nothing():
    c = make_candidate(
        start={"old.txt": b"gone\n", "keep.txt": b"k\n"}, fix={"old.txt": None, "new.txt": b"n\n"}
    )
    changes, rest = reference_changes(c)
    assert [(x.path, x.change, x.added, x.removed) for x in changes] == [
        ("new.txt", "added", 1, 0),
        ("old.txt", "deleted", 0, 1),
    ]
    assert rest == 0


def test_the_starting_tree_is_in_natural_order_with_the_fixs_files_marked():
    start = {"src/mod_10.py": b"a\n", "src/mod_2.py": b"b\n", "README.md": b"r\n"}
    c = make_candidate(start=start, fix={"src/mod_10.py": b"A\n", "README.md": None})
    rows = [(r.depth, r.name, r.is_dir, r.change) for r in start_tree(c)]
    assert rows == [
        (0, "src", True, ""),
        (1, "mod_2.py", False, ""),
        (1, "mod_10.py", False, "modified"),
        (0, "README.md", False, "deleted"),
    ]
