"""The repair family on hand-built trajectories: the candidates it assembles, end to end."""

from __future__ import annotations

import re

from .repair_helpers import (
    CALC_BUGGY,
    CALC_FIXED,
    ROOT,
    TEST_CALC,
    Session,
    fixed_python_story,
    python_story,
    texts,
)


def test_python_repair_has_the_exact_starting_and_reference_files():
    mined = fixed_python_story().mine()
    candidate = mined.only
    assert texts(candidate.start_files, mined.blobs) == {
        "calc.py": CALC_BUGGY,
        "tests/test_calc.py": TEST_CALC,
    }
    assert texts(candidate.ref_files, mined.blobs) == {
        "calc.py": CALC_FIXED,
        "tests/test_calc.py": TEST_CALC,
    }
    assert (candidate.added, candidate.modified, candidate.deleted) == ((), ("calc.py",), ())
    assert (candidate.language, candidate.runner, candidate.check_kind) == (
        "python",
        "pytest",
        "test",
    )
    assert (candidate.command, candidate.task_command) == ("python -m pytest -q",) * 2
    assert (candidate.cwd, candidate.check_cwd, candidate.project_dir) == (".", ".", "/app")
    assert (candidate.fail_command_index, candidate.pass_command_index) == (0, 1)
    assert (candidate.fail_step_index, candidate.pass_step_index) == (3, 5)
    assert (candidate.fail_step_id, candidate.pass_step_id) == (4, 6)
    assert candidate.fail_exit_code == 1
    assert candidate.test_paths == ("tests/test_calc.py",)
    assert not candidate.fix_edits_tests
    assert candidate.family == "repair"
    assert re.fullmatch(r"[0-9a-f]{64}", candidate.key)
    # The output is the command's own, with the recorded root moved to /app.
    assert candidate.failing_output.startswith("F ")
    assert "/app/tests/test_calc.py:5: AssertionError" in candidate.failing_output
    assert ROOT + "/" not in candidate.failing_output


def test_node_repair_tracks_added_modified_and_deleted_files():
    package = '{"name": "greet", "scripts": {"test": "node --test"}}\n'
    index_buggy = "exports.greet = (name) => 'Hello ' + name;\n"
    index_fixed = "const { punctuate } = require('./lib/punctuate');\n" + (
        "exports.greet = (name) => punctuate('Hello, ' + name);\n"
    )
    helper = "exports.punctuate = (text) => text + '!';\n"
    test = (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "const { greet } = require('..');\n"
        "test('greets', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n"
    )
    mined = (
        Session()
        .user("Write a greet(name) helper that says 'Hello, <name>!' and test it with npm test.")
        .write("package.json", package)
        .write("index.js", index_buggy)
        .write("legacy.js", "module.exports = {};\n")
        .write("test/greet.test.js", test)
        .run("npm test", fail=True, output="not ok 1 - greets\n# fail 1")
        .write("lib/punctuate.js", helper)
        .write("index.js", index_fixed)
        .run("rm legacy.js")
        .run("npm test", output="ok 1 - greets\n# fail 0")
        .mine()
    )
    candidate = mined.only
    assert (candidate.language, candidate.runner) == ("node", "npm")
    assert candidate.added == ("lib/punctuate.js",)
    assert candidate.modified == ("index.js",)
    assert candidate.deleted == ("legacy.js",)
    assert set(candidate.start_files) == {
        "package.json",
        "index.js",
        "legacy.js",
        "test/greet.test.js",
    }
    assert texts(candidate.ref_files, mined.blobs) == {
        "package.json": package,
        "index.js": index_fixed,
        "lib/punctuate.js": helper,
        "test/greet.test.js": test,
    }
    assert candidate.test_paths == ("package.json", "test/greet.test.js")
    assert candidate.changed == ("index.js", "legacy.js", "lib/punctuate.js")


def test_the_key_is_the_same_for_the_same_repair_recorded_under_another_root():
    here = fixed_python_story("/repo").mine().only
    there = fixed_python_story("/home/someone/work/calc").mine().only
    assert here.key == there.key
    assert here.task_command == there.task_command
    other = (
        python_story()
        .edit("calc.py", "    return a - b\n", "    return b + a\n")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .only
    )
    assert other.key != here.key


def test_the_recorded_root_in_the_command_is_rewritten_to_the_project_dir():
    mined = (
        Session("/home/dev/calc")
        .write("calc.py", CALC_BUGGY)
        .write("tests/test_calc.py", TEST_CALC)
        .run("cd /home/dev/calc && python -m pytest -q", fail=True, output="1 failed")
        .edit("calc.py", "a - b", "a + b")
        .run("cd /home/dev/calc && python -m pytest -q", output="1 passed")
        .mine()
    )
    candidate = mined.only
    assert candidate.command == "cd /home/dev/calc && python -m pytest -q"
    assert candidate.task_command == "cd /app && python -m pytest -q"
    assert candidate.root == "/home/dev/calc"


def test_a_request_made_after_the_failure_does_not_reach_the_instruction():
    candidate = (
        python_story()
        .user("Hint: it should be `return a + b  # the sum, not the difference`.")
        .edit("calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .only
    )
    assert "Hint" not in candidate.instruction
    assert "Add an add(a, b) function" in candidate.instruction
