"""Which runs of a check pair up into a repair: the last failure before each pass."""

from __future__ import annotations

import pytest

from tasks_review.core.mining import bare_check_command, check_pairs
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import replay

from .repair_helpers import (
    CALC_BUGGY,
    ROOT,
    TEST_CALC,
    Session,
    fixed_python_story,
    python_story,
    texts,
)


def test_several_failures_before_one_pass_give_one_candidate_from_the_last_failure():
    mined = (
        python_story()
        .edit("calc.py", "    return a - b\n", "    return b - a\n")
        .run("python -m pytest -q", fail=True, output="E       assert 1 == 5")
        .edit("calc.py", "    return b - a\n", "    return a + b  # the sum, not the difference\n")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    candidate = mined.only
    assert (candidate.fail_command_index, candidate.pass_command_index) == (1, 2)
    assert (
        texts(candidate.start_files, mined.blobs)["calc.py"] == "def add(a, b):\n    return b - a\n"
    )
    assert "assert 1 == 5" in candidate.failing_output


def test_each_pass_closes_its_window_so_two_repairs_give_two_candidates():
    mined = (
        fixed_python_story()
        .edit("calc.py", "# the sum", "# the sum!")
        .edit("tests/test_calc.py", "== 5", "== 6")
        .run("python -m pytest -q", fail=True, output="E assert 5 == 6")
        .edit("tests/test_calc.py", "== 6", "== 5")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    assert [(c.fail_command_index, c.pass_command_index) for c in mined.candidates] == [
        (0, 1),
        (2, 3),
    ]
    second = mined.candidates[1]
    assert second.modified == ("tests/test_calc.py",)
    assert second.fix_edits_tests
    assert "grader's copy of the tests is not identical" in second.instruction


def test_runs_of_another_command_or_directory_are_a_different_check():
    mined = (
        python_story()
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q tests", output="1 passed")  # another command string
        .run("cd tests")
        .run("python -m pytest -q", output="1 passed")  # same string, another directory
        .mine()
    )
    assert mined.candidates == [] and mined.drops == []


def test_masked_runs_and_runs_without_status_say_nothing():
    commands = (
        python_story()
        .run("python -m pytest -q | tail -3", fail=True, output="1 failed")
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q | tail -3", output="1 passed")
    )
    commands.builder.call("Bash", {"command": "python -m pytest -q"}, None)  # no result
    mined = commands.mine()
    assert mined.candidates == [] and mined.drops == []


def test_check_pairs_pairs_each_pass_with_the_last_failure_before_it():
    atif, side = (
        Session()
        .run("pytest", fail=True)
        .run("pytest", fail=True)
        .run("pytest")
        .run("pytest")
        .run("pytest", fail=True)
        .run("pytest")
        .builder.build()
    )
    result = replay(atif, side, root=ROOT, blobs=MemoryBlobs())
    assert [(f.index, p.index) for f, p in check_pairs(result.commands)] == [(1, 2), (4, 5)]


@pytest.mark.parametrize(
    "recorded, bare",
    [
        (".venv/bin/pytest -q", "pytest -q"),
        ("./.venv/bin/pytest", "pytest"),
        ("venv/bin/python -m pytest tests/test_calc.py", "python -m pytest tests/test_calc.py"),
        ("/home/u/proj/.venv/bin/python -m unittest", "python -m unittest"),
        (".venv/bin/python3.12 -m pytest", "python3.12 -m pytest"),
        ("cd /home/u/proj && .venv/bin/pytest -x", "cd /home/u/proj && pytest -x"),
        ("~/.virtualenvs/proj/bin/mypy src", "mypy src"),
        ('".venv/bin/pytest" -q', '"pytest" -q'),
        ("timeout 60 .venv/bin/pytest 2>&1 | tail -5", "timeout 60 pytest 2>&1 | tail -5"),
        ("pytest -q", "pytest -q"),
        ("python -m pytest", "python -m pytest"),
        ("source .venv/bin/activate && pytest", "source .venv/bin/activate && pytest"),
        (".venv/bin/pytest-watch", ".venv/bin/pytest-watch"),
        ("tools/bin/pytest", "tools/bin/pytest"),
        ("npm test", "npm test"),
    ],
)
def test_bare_check_command_takes_the_recorded_virtualenv_off_python_programs(recorded, bare):
    assert bare_check_command(recorded) == bare


@pytest.mark.parametrize(
    "failing_run, passing_run, task_command",
    [
        (".venv/bin/pytest -q", "pytest -q", "pytest -q"),
        ("pytest -q", "./.venv/bin/pytest -q", "pytest -q"),
        ("venv/bin/python -m pytest -q", "venv/bin/python -m pytest -q", "python -m pytest -q"),
        (f"{ROOT}/.venv/bin/python -m pytest -q", "python -m pytest -q", "python -m pytest -q"),
    ],
)
def test_a_check_through_the_recorded_virtualenv_pairs_with_the_bare_one_and_the_task_runs_it_bare(
    failing_run, passing_run, task_command
):
    candidate = (
        Session()
        .write("calc.py", CALC_BUGGY)
        .write("tests/test_calc.py", TEST_CALC)
        .run(failing_run, fail=True, output="1 failed")
        .edit("calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n")
        .run(passing_run, output="1 passed")
        .mine()
        .only
    )
    assert candidate.command == failing_run  # as recorded
    assert candidate.task_command == task_command
    assert (candidate.fail_command_index, candidate.pass_command_index) == (0, 1)
