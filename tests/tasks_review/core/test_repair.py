"""The repair family on hand-built trajectories: known candidates, and one drop per reason."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from tasks_review.core.mining import (
    Drop,
    DropReason,
    RepairCandidate,
    check_pairs,
    find_repair_candidates,
    installs_packages,
)
from trajectories.core.blobs import BlobStore, MemoryBlobs
from trajectories.core.replay import StateIndex, replay
from trajectories.core.replay.synthetic import AtifBuilder

ROOT = "/repo"

CALC_BUGGY = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b  # the sum, not the difference\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PYTEST_FAIL = (
    "F                                                                        [100%]\n"
    "    def test_add():\n>       assert add(2, 3) == 5\nE       assert -1 == 5\n"
    f"{ROOT}/tests/test_calc.py:5: AssertionError\n1 failed in 0.02s"
)


@dataclass
class Mined:
    candidates: list[RepairCandidate]
    drops: list[Drop]
    blobs: MemoryBlobs

    @property
    def only(self) -> RepairCandidate:
        assert not self.drops, self.drops
        (candidate,) = self.candidates
        return candidate

    @property
    def dropped(self) -> Drop:
        assert not self.candidates, [c.summary() for c in self.candidates]
        (drop,) = self.drops
        return drop


def texts(files: Mapping[str, str], blobs: BlobStore) -> dict[str, str]:
    return {path: blobs.get(sha).decode() for path, sha in files.items()}


class Session:
    """A Claude-Code-style session written step by step, replayed and mined on demand."""

    def __init__(self, root: str = ROOT, agent: str = "claude-code") -> None:
        self.root = root
        self.builder = AtifBuilder(agent, root=root)

    def path(self, path: str) -> str:
        return path if path.startswith("/") or ":" in path else f"{self.root}/{path}"

    def user(self, text: str) -> Session:
        self.builder.user(text)
        return self

    def write(self, path: str, content: str) -> Session:
        full = self.path(path)
        self.builder.call(
            "Write",
            {"file_path": full, "content": content},
            f"File created successfully at: {full}",
        )
        return self

    def edit(self, path: str, old: str, new: str) -> Session:
        full = self.path(path)
        self.builder.call(
            "Edit",
            {"file_path": full, "old_string": old, "new_string": new, "replace_all": False},
            f"The file {full} has been updated successfully.",
        )
        return self

    def read(self, path: str, content: str) -> Session:
        lines = [*content.split("\n")]
        listing = "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(lines, 1))
        self.builder.call("Read", {"file_path": self.path(path)}, listing)
        return self

    def read_part(self, path: str, first_lines: list[str]) -> Session:
        listing = "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(first_lines, 1))
        args = {"file_path": self.path(path), "offset": 1, "limit": len(first_lines)}
        self.builder.call("Read", args, listing)
        return self

    def run(self, command: str, *, fail: bool = False, output: str = "") -> Session:
        if fail:
            self.builder.call("Bash", {"command": command}, f"Exit code 1\n{output}", error=True)
        else:
            self.builder.call("Bash", {"command": command}, output or "ok")
        return self

    def mine(self, **options) -> Mined:
        atif, side = self.builder.build()
        blobs = MemoryBlobs()
        result = replay(atif, side, root=self.root, blobs=blobs)
        candidates, drops = find_repair_candidates(
            result, StateIndex.build(result, every=4), blobs, atif, **options
        )
        return Mined(candidates, drops, blobs)


def python_story(root: str = ROOT) -> Session:
    """Writes calc.py with a bug and its test, runs pytest (fails), leaves the fix to callers."""
    return (
        Session(root)
        .user("Add an add(a, b) function to calc.py, with a pytest test.")
        .write("calc.py", CALC_BUGGY)
        .write("tests/test_calc.py", TEST_CALC)
        .run("python -m pytest -q", fail=True, output=PYTEST_FAIL.replace(ROOT, root))
    )


def fixed_python_story(root: str = ROOT) -> Session:
    return (
        python_story(root)
        .edit("calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n")
        .run("python -m pytest -q", output="1 passed in 0.01s")
    )


# -- known candidates --------------------------------------------------------------------------


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


def test_a_file_first_read_between_the_runs_was_there_at_the_start():
    helper = "def double(x):\n    return 2 * x\n"
    mined = (
        python_story()
        .read("helpers.py", helper)
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    candidate = mined.only
    assert texts(candidate.start_files, mined.blobs)["helpers.py"] == helper
    assert texts(candidate.ref_files, mined.blobs)["helpers.py"] == helper
    assert candidate.changed == ("calc.py",)


def test_files_seen_only_in_part_and_left_alone_are_listed_unknown_and_left_out():
    mined = (
        python_story()
        .read_part("big_module.py", ["import os", "import sys"])
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    candidate = mined.only
    assert candidate.unknown_paths == ("big_module.py",)
    assert "big_module.py" not in candidate.start_files
    assert "big_module.py" not in candidate.ref_files


def test_writes_to_scratch_space_outside_the_project_are_not_part_of_the_fix():
    mined = (
        python_story()
        .write("/tmp/debug_calc.py", "print(1)\n")
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    assert mined.only.changed == ("calc.py",)


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


# -- one drop per reason -----------------------------------------------------------------------


def _assert_drop(drop: Drop, reason: DropReason, fragment: str) -> None:
    assert drop.reason is reason
    assert (drop.family, drop.stage) == ("repair", "mine")
    assert fragment in drop.detail, drop.detail
    record = drop.to_dict()
    assert record["reason"] == str(reason)
    assert record["candidate"]["fail_command_index"] == drop.fail_command_index


def test_drop_no_change_when_the_same_files_fail_then_pass():
    drop = python_story().run("python -m pytest -q", output="1 passed").mine().dropped
    _assert_drop(drop, DropReason.NO_CHANGE, "flaky or environmental")
    assert (drop.fail_command_index, drop.pass_command_index) == (0, 1)
    assert drop.command == "python -m pytest -q"


def test_drop_package_install_fix_when_only_an_install_happened():
    drop = (
        Session()
        .write("calc.py", CALC_FIXED)
        .write("tests/test_calc.py", TEST_CALC)
        .run("python -m pytest -q", fail=True, output="/usr/bin/python: No module named pytest")
        .run("pip install pytest -q 2>&1 | tail -3", output="Successfully installed pytest")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.PACKAGE_INSTALL_FIX, "pip install pytest")
    assert "no source file changed" in drop.detail


def test_drop_package_install_fix_when_only_manifests_changed_beside_the_install():
    drop = (
        Session()
        .write("package.json", '{"name": "x", "dependencies": {}}\n')
        .write("index.js", "require('left-pad');\n")
        .write("test/index.test.js", "require('..');\n")
        .run("node --test", fail=True, output="Cannot find module 'left-pad'")
        .run("npm install left-pad")
        .write("package.json", '{"name": "x", "dependencies": {"left-pad": "1.3.0"}}\n')
        .run("node --test", output="# pass 1")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.PACKAGE_INSTALL_FIX, "only dependency files changed")
    assert "package.json" in drop.detail


def test_drop_package_install_fix_when_the_fix_only_edited_installed_dependencies():
    drop = (
        Session()
        .write("index.js", "require('left-pad');\n")
        .write("node_modules/left-pad/index.js", "module.exports = broken\n")
        .run("node --test", fail=True, output="ReferenceError: broken is not defined")
        .write("node_modules/left-pad/index.js", "module.exports = (s) => s;\n")
        .run("node --test", output="# pass 1")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.PACKAGE_INSTALL_FIX, "node_modules/left-pad/index.js")


def test_drop_fix_touches_lost_file_when_the_fix_was_made_by_an_unreadable_command():
    drop = (
        python_story()
        .run("sed -i 's/a - b/a + b/' calc.py")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "calc.py")


def test_drop_fix_touches_lost_file_when_an_edit_lands_on_unknown_content():
    drop = (
        python_story()
        .edit("calc_impl.py", "a - b", "a + b")  # never read: its content is unknown
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "calc_impl.py")


def test_drop_fix_touches_lost_file_when_a_formatter_made_the_tree_uncertain():
    drop = (
        python_story()
        .run("black .")
        .read("calc.py", CALC_FIXED.rstrip("\n") + "\n")  # known again, but other files are not
        .read("tests/test_calc.py", TEST_CALC)
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "may have changed files under")


def test_drop_check_reads_lost_file_when_the_named_test_file_is_only_partly_known():
    drop = (
        Session()
        .write("calc.py", CALC_BUGGY)
        .read_part("tests/test_calc.py", ["from calc import add", ""])
        .run("python -m pytest -q tests/test_calc.py::test_add", fail=True, output="1 failed")
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q tests/test_calc.py::test_add", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.CHECK_READS_LOST_FILE, "tests/test_calc.py")


def test_drop_check_reads_lost_file_when_the_named_test_file_was_never_seen():
    drop = (
        Session()
        .write("calc.js", "exports.add = (a, b) => a - b;\n")
        .run("node --test test/calc.test.js", fail=True, output="not ok 1")
        .edit("calc.js", "a - b", "a + b")
        .run("node --test test/calc.test.js", output="ok 1")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.CHECK_READS_LOST_FILE, "never seen")


def test_drop_check_reads_lost_file_when_npm_scripts_are_unknown():
    drop = (
        Session()
        .read_part("package.json", ["{"])
        .write("index.js", "exports.x = 1;\n")
        .run("npm test", fail=True, output="not ok 1")
        .edit("index.js", "= 1", "= 2")
        .run("npm test", output="ok 1")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.CHECK_READS_LOST_FILE, "package.json")


def test_drop_unsupported_language_for_a_rust_check():
    drop = (
        Session()
        .write("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a - b }\n")
        .run("cargo test", fail=True, output="test result: FAILED")
        .edit("src/lib.rs", "a - b", "a + b")
        .run("cargo test", output="test result: ok")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.UNSUPPORTED_LANGUAGE, "rust check (cargo)")


def test_the_supported_languages_are_configurable():
    mined = fixed_python_story().mine(languages={"node"})
    _assert_drop(mined.dropped, DropReason.UNSUPPORTED_LANGUAGE, "supported: node")


def test_drop_windows_paths_when_the_project_was_written_on_windows():
    drop = (
        python_story()
        .write("C:\\proj\\calc.py", CALC_FIXED)
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.WINDOWS_PATHS, "C:\\proj\\calc.py")


def test_drop_instruction_leaks_fix_when_the_request_already_holds_the_added_line():
    drop = (
        Session()
        .user("Please make add() do `return a + b  # the sum, not the difference` in calc.py.")
        .write("calc.py", CALC_BUGGY)
        .write("tests/test_calc.py", TEST_CALC)
        .run("python -m pytest -q", fail=True, output="1 failed")
        .edit("calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.INSTRUCTION_LEAKS_FIX, "return a + b  # the sum")


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


def test_drop_start_too_large_by_bytes_or_by_file_count():
    by_bytes = fixed_python_story().mine(max_start_bytes=10).dropped
    _assert_drop(by_bytes, DropReason.START_TOO_LARGE, "2 files")
    by_count = fixed_python_story().mine(max_files=1).dropped
    _assert_drop(by_count, DropReason.START_TOO_LARGE, "limits 1 files")


def test_drop_path_escapes_root_when_the_fix_wrote_outside_the_project():
    drop = (
        python_story()
        .write("/usr/lib/python3/dist-packages/calc_patch.py", "ADD = 1\n")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.PATH_ESCAPES_ROOT, "/usr/lib/python3/dist-packages/calc_patch.py")


def test_drop_path_escapes_root_when_the_check_ran_outside_the_project():
    drop = (
        python_story()
        .edit("calc.py", "a - b", "a + b")
        .run("cd /elsewhere")
        .run("python -m pytest -q", fail=True, output="1 failed")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.PATH_ESCAPES_ROOT, "outside the project root")


def test_every_reason_code_is_stable_and_documented():
    assert {reason.value for reason in DropReason} == {
        "fix_touches_lost_file",
        "check_reads_lost_file",
        "no_change",
        "package_install_fix",
        "unsupported_language",
        "windows_paths",
        "instruction_leaks_fix",
        "start_too_large",
        "path_escapes_root",
    }


@pytest.mark.parametrize(
    "command, installs",
    [
        ("pip install pytest", True),
        ("python3 -m pip install -r requirements.txt", True),
        ("uv pip install ruff", True),
        ("uv add httpx", True),
        ("poetry install", True),
        ("npm install", True),
        ("npm i -D vitest", True),
        ("npm ci", True),
        ("yarn", True),
        ("yarn add lodash", True),
        ("pnpm install --frozen-lockfile", True),
        ("sudo apt-get install -y libxml2", True),
        ("cd web && npm install && npm test", True),
        ("go mod download", True),
        ("npm test", False),
        ("npm run install-hooks", False),
        ("pip list", False),
        ("echo pip install pytest", False),
        ("python -m pytest", False),
    ],
)
def test_installs_packages_recognises_package_managers(command, installs):
    assert installs_packages(command) is installs


def test_a_source_fix_beside_an_install_is_a_candidate_when_every_file_is_known():
    mined = (
        python_story()
        .run("pip install requests")
        .edit("calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    assert mined.only.changed == ("calc.py",)


def test_an_npm_install_that_rewrote_package_json_unseen_drops_a_source_fix():
    drop = (
        Session()
        .write("package.json", '{"name": "x"}\n')
        .write("index.js", "exports.x = 1;\n")
        .run("node --test", fail=True, output="not ok 1")
        .run("npm install left-pad")  # package.json and the lockfile become unknown
        .edit("index.js", "= 1", "= 2")
        .run("node --test", output="ok 1")
        .mine()
        .dropped
    )
    _assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "package.json")


# -- Codex: files read with the shell, then patched ----------------------------------------------

PLUGIN_A = (
    "export function buildConfig() {\n  return {\n    share: 'disabled',\n"
    "    provider: {},\n  };\n}\n"
)
PLUGIN_B = (
    "export const plugin = {\n  config() {\n    return {\n        share: 'disabled',\n"
    "        provider: {},\n    };\n  },\n};\n"
)
PLUGIN_TEST = (
    "import { describe, expect, it } from 'vitest';\nimport { buildConfig } from './a.plugin';\n\n"
    "describe('Compaction Config', () => {\n  it('defaults to 90%', () => {\n"
    "    expect(buildConfig().compaction).toEqual({ auto: true, threshold: 0.9 });\n  });\n});\n"
)
PACKAGE = '{\n  "name": "plugins",\n  "scripts": {\n    "test": "vitest"\n  }\n}\n'
VITEST = 'npm test -- --run src/plugins.test.ts -t "Compaction Config"'
HUNK_A = (
    "*** Update File: src/a.plugin.ts\n@@\n     share: 'disabled',\n"
    "+    compaction: { auto: true, threshold: 0.9 },\n     provider: {},\n"
)
HUNK_B = (
    "*** Update File: src/b.plugin.ts\n@@\n         share: 'disabled',\n"
    "+        compaction: { auto: true, threshold: 0.9 },\n         provider: {},\n"
)


class CodexSession(Session):
    """A Codex rollout as ingest gives it: exec_command results behind Codex's envelope."""

    def __init__(self, root: str = ROOT) -> None:
        super().__init__(root, agent="codex")

    def run(self, command: str, *, fail: bool = False, output: str = "") -> CodexSession:
        code = 1 if fail else 0
        text = (
            f"Chunk ID: 9c1e2f\nWall time: 0.2000 seconds\nProcess exited with code {code}\n"
            f"Original token count: {(len(output) + 3) // 4}\nOutput:\n{output}"
        )
        self.builder.call("exec_command", {"cmd": command, "workdir": self.root}, text)
        return self

    def patch(self, body: str) -> CodexSession:
        self.builder.call(
            "apply_patch",
            {"input": f"*** Begin Patch\n{body}*** End Patch\n"},
            "Success. Updated the following files:\n",
        )
        return self


def codex_vitest_story(read_b: str = "head -n 400 src/b.plugin.ts", *, early: bool = True):
    """Codex reads the project with the shell, the vitest case fails, two patches fix it."""
    session = (
        CodexSession()
        .user("Make the default context compaction threshold 90%.")
        .run("cat package.json", output=PACKAGE)
        .run("sed -n '1,200p' src/a.plugin.ts", output=PLUGIN_A)
        .run("cat src/plugins.test.ts", output=PLUGIN_TEST)
    )
    if early:
        session.run(read_b, output=PLUGIN_B)
    session.run(VITEST, fail=True, output="FAIL src/plugins.test.ts > Compaction Config\n")
    if not early:
        session.run(read_b, output=PLUGIN_B)
    return session.patch(HUNK_A).patch(HUNK_B).run(VITEST, output=" Test Files  1 passed (1)\n")


@pytest.mark.parametrize("early", [True, False])
def test_codex_shell_reads_then_apply_patch_make_a_repair_candidate(early):
    # Read in full before the failing run, or between the runs (it was there all along).
    mined = codex_vitest_story(early=early).mine()
    candidate = mined.only
    assert (candidate.runner, candidate.language, candidate.check_kind) == ("npm", "node", "test")
    assert (candidate.fail_command_index, candidate.pass_command_index) == (
        (4, 5) if early else (3, 5)
    )
    start = texts(candidate.start_files, mined.blobs)
    ref = texts(candidate.ref_files, mined.blobs)
    assert start == {
        "package.json": PACKAGE,
        "src/a.plugin.ts": PLUGIN_A,
        "src/b.plugin.ts": PLUGIN_B,
        "src/plugins.test.ts": PLUGIN_TEST,
    }
    assert candidate.modified == ("src/a.plugin.ts", "src/b.plugin.ts")
    assert not candidate.added and not candidate.deleted
    assert ref == start | {
        "src/a.plugin.ts": PLUGIN_A.replace(
            "    provider", "    compaction: { auto: true, threshold: 0.9 },\n    provider"
        ),
        "src/b.plugin.ts": PLUGIN_B.replace(
            "        provider",
            "        compaction: { auto: true, threshold: 0.9 },\n        provider",
        ),
    }


@pytest.mark.parametrize(
    "read_b",
    [
        "sed -n '1,8p' src/b.plugin.ts",  # all 8 lines of the range: the file may go on
        "sed -n '2,40p' src/b.plugin.ts",  # not from the first line
        "head -n 400 src/b.plugin.ts | cat",  # not a simple read
    ],
)
def test_codex_repair_on_a_file_seen_only_in_part_is_dropped(read_b):
    drop = codex_vitest_story(read_b).mine().dropped
    _assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "src/b.plugin.ts")
    assert "src/a.plugin.ts" not in drop.detail


def _with_read_change(session: Session, path: str, **fields) -> Mined:
    """Mine ``session`` after rewriting the change its reads recorded for ``path``."""
    atif, side = session.builder.build()
    blobs = MemoryBlobs()
    result = replay(atif, side, root=session.root, blobs=blobs)
    events = tuple(
        dataclasses.replace(
            event,
            changes={
                key: dataclasses.replace(change, **fields) if key == path else change
                for key, change in event.changes.items()
            },
        )
        for event in result.events
    )
    result = dataclasses.replace(result, events=events)
    candidates, drops = find_repair_candidates(result, StateIndex.build(result), blobs, atif)
    return Mined(candidates, drops, blobs)


def test_the_miner_tells_reads_from_writes_by_the_observed_flag_not_the_reason():
    helper = "def double(x):\n    return 2 * x\n"
    story = (
        python_story()
        .read("helpers.py", helper)
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
    )
    as_read = _with_read_change(story, "helpers.py", reason="looked at", observed=True).only
    assert as_read.changed == ("calc.py",) and "helpers.py" in as_read.start_files
    # The same change with the old reason text but not marked observed is a write in the fix.
    as_write = _with_read_change(story, "helpers.py", reason="read in full", observed=False).only
    assert as_write.added == ("helpers.py",) and "helpers.py" not in as_write.start_files
