"""The grader kit as shipped in every task's tests/grader/."""

from __future__ import annotations

from tasks_review.core.taskfiles import GRADER_FILES

from .helpers import KIT, load


def test_the_grader_is_standard_library_only():
    for name in (
        "grade.py",
        "judging.py",
        "copies.py",
        "traj2env_channel.py",
        "shim.py",
        "unittest_harness.py",
        "pytest_boot.py",
        "traj2env_pytest_controls.py",
        *(name for name in GRADER_FILES if name.endswith(".py")),
    ):
        text = (KIT / name).read_text()
        assert "tasks_review" not in text and "django" not in text.lower(), name


def test_every_kit_file_is_shipped_and_what_the_check_loads_is_among_them():
    # grade.py imports its siblings from tests/grader/: one left out fails every grading.
    on_disk = {p.name for p in KIT.iterdir() if p.is_file() and p.name != "__init__.py"}
    assert set(GRADER_FILES) == on_disk
    assert len(GRADER_FILES) == len(on_disk)
    assert set(load("running").KIT_FILES) <= set(GRADER_FILES)
