"""The repair family drops a pair for one reason, the first that applies: one test per reason."""

from __future__ import annotations

import pytest

from tasks_review.core.mining import DropReason, installs_packages

from .repair_helpers import (
    CALC_BUGGY,
    CALC_FIXED,
    TEST_CALC,
    Session,
    assert_drop,
    check_story,
    fixed_python_story,
    python_story,
)


def test_drop_no_change_when_the_same_files_fail_then_pass():
    drop = python_story().run("python -m pytest -q", output="1 passed").mine().dropped
    assert_drop(drop, DropReason.NO_CHANGE, "flaky or environmental")
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
    assert_drop(drop, DropReason.PACKAGE_INSTALL_FIX, "pip install pytest")
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
    assert_drop(drop, DropReason.PACKAGE_INSTALL_FIX, "only dependency files changed")
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
    assert_drop(drop, DropReason.PACKAGE_INSTALL_FIX, "node_modules/left-pad/index.js")


def test_drop_fix_touches_lost_file_when_the_fix_was_made_by_an_unreadable_command():
    drop = (
        python_story()
        .run("sed -i 's/a - b/a + b/' calc.py")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "calc.py")


def test_drop_fix_touches_lost_file_when_an_edit_lands_on_unknown_content():
    drop = (
        python_story()
        .edit("calc_impl.py", "a - b", "a + b")  # never read: its content is unknown
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "calc_impl.py")


def test_drop_fix_touches_lost_file_when_only_a_formatter_may_have_changed_files():
    drop = python_story().run("black .").run("python -m pytest -q", output="1 passed").mine()
    assert_drop(
        drop.dropped,
        DropReason.FIX_TOUCHES_LOST_FILE,
        "only a command the trajectory does not show may have changed files",
    )


def test_a_change_the_log_shows_at_both_ends_is_a_fix_even_when_a_formatter_made_it():
    candidate = (
        python_story()
        .run("black .")
        .read("calc.py", CALC_FIXED.rstrip("\n") + "\n")
        .read("tests/test_calc.py", TEST_CALC)
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .only
    )
    assert candidate.modified == ("calc.py",) and not candidate.presumed


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
    assert_drop(drop, DropReason.CHECK_READS_LOST_FILE, "tests/test_calc.py")


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
    assert_drop(drop, DropReason.CHECK_READS_LOST_FILE, "never seen")


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
    assert_drop(drop, DropReason.CHECK_READS_LOST_FILE, "package.json")


def _script_check_story(manifests: dict[str, str], command: str) -> Session:
    """calc.py fixed between a failing and a passing run of ``command``, beside ``manifests``."""
    return check_story(command, files=manifests)


PACKAGE_JSON = '{"scripts": {"test": "pytest", "check": "pytest"}}\n'
MAKEFILE = "test:\n\tpytest\n"


@pytest.mark.parametrize(
    "manifests, command, detail",
    [
        ({}, "npm run test:unit", "npm run test:unit needs package.json in ."),
        ({}, "npm test", "package.json"),
        ({}, "yarn test", "package.json"),
        ({}, "make test", "make test needs Makefile / makefile / GNUmakefile in ."),
        ({}, "mise run test", "mise.toml"),
        ({}, "just test", "justfile"),
        ({}, "task test", "Taskfile.yml"),
        ({"other/package.json": PACKAGE_JSON}, "npm --prefix web test", "in web or above"),
        ({"Makefile": MAKEFILE}, "make -C sub test", "Makefile / makefile / GNUmakefile in sub"),
        ({"Makefile": MAKEFILE}, "make -f build.mk test", "needs build.mk"),
    ],
)
def test_drop_check_manifest_unseen_when_the_script_runner_has_no_manifest_in_the_tree(
    manifests, command, detail
):
    drop = _script_check_story(manifests, command).mine().dropped
    assert_drop(drop, DropReason.CHECK_MANIFEST_UNSEEN, detail)


@pytest.mark.parametrize(
    "manifests, command",
    [
        ({"package.json": PACKAGE_JSON}, "npm run test:unit"),
        ({"package.json": PACKAGE_JSON}, "yarn test"),
        ({"package.json": PACKAGE_JSON}, "npm --prefix web test"),  # npm looks upward
        ({"Makefile": MAKEFILE}, "make test"),
        ({"sub/Makefile": MAKEFILE}, "make -C sub test"),
        ({"build.mk": MAKEFILE}, "make -f build.mk test"),
        ({"justfile": "test:\n    pytest\n"}, "just test"),
        ({"mise.toml": '[tasks.test]\nrun = "pytest"\n'}, "mise run test"),
        ({".mise/tasks/test": "#!/bin/sh\npytest\n"}, "mise run test"),
        ({"Taskfile.yml": "tasks:\n  test: pytest\n"}, "task test"),
    ],
)
def test_a_script_check_whose_manifest_was_seen_is_a_candidate(manifests, command):
    assert _script_check_story(manifests, command).mine().only.changed == ("calc.py",)


def test_a_script_check_whose_manifest_was_only_read_is_a_candidate():
    mined = (
        Session()
        .read("Makefile", MAKEFILE)
        .write("calc.py", CALC_BUGGY)
        .write("tests/test_calc.py", TEST_CALC)
        .run("make test", fail=True, output="1 failed")
        .edit("calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n")
        .run("make test", output="1 passed")
        .mine()
    )
    assert "Makefile" in mined.only.start_files


def test_drop_unsupported_language_for_an_elixir_check():
    drop = (
        Session()
        .write("lib/calc.ex", "defmodule Calc do\n  def add(a, b), do: a - b\nend\n")
        .run("mix test", fail=True, output="1 test, 1 failure")
        .edit("lib/calc.ex", "a - b", "a + b")
        .run("mix test", output="1 test, 0 failures")
        .mine()
        .dropped
    )
    assert_drop(drop, DropReason.UNSUPPORTED_LANGUAGE, "elixir check (mix)")


def rust_story(files: dict[str, str]) -> Session:
    session = Session()
    for path, content in files.items():
        session.write(path, content)
    return (
        session.write("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a - b }\n")
        .write("tests/add.rs", "#[test]\nfn adds() { assert_eq!(calc::add(2, 2), 4); }\n")
        .run("cargo test", fail=True, output="test adds ... FAILED\ntest result: FAILED")
        .edit("src/lib.rs", "a - b", "a + b")
        .run("cargo test", output="test adds ... ok\ntest result: ok")
    )


def test_a_rust_check_is_a_candidate_once_its_cargo_toml_was_seen():
    manifest = '[package]\nname = "calc"\nversion = "0.1.0"\n\n[dependencies]\nitoa = "1"\n'
    candidate = rust_story({"Cargo.toml": manifest}).mine().only
    assert (candidate.language, candidate.runner, candidate.task_command) == (
        "rust",
        "cargo",
        "cargo test",
    )
    assert {"Cargo.toml", "src/lib.rs", "tests/add.rs"} <= set(candidate.start_files)
    assert "tests/add.rs" in candidate.test_paths
    # Its crates are the task writer's to fetch (trials/crates.py), not mining's to judge.
    drop = rust_story({}).mine().dropped
    assert_drop(drop, DropReason.CHECK_MANIFEST_UNSEEN, "cargo test needs Cargo.toml in .")


def test_the_supported_languages_are_configurable():
    mined = fixed_python_story().mine(languages={"node"})
    assert_drop(mined.dropped, DropReason.UNSUPPORTED_LANGUAGE, "supported: node")


def test_drop_windows_paths_when_the_project_was_written_on_windows():
    drop = (
        python_story()
        .write("C:\\proj\\calc.py", CALC_FIXED)
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    assert_drop(drop, DropReason.WINDOWS_PATHS, "C:\\proj\\calc.py")


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
    assert_drop(drop, DropReason.INSTRUCTION_LEAKS_FIX, "return a + b  # the sum")


def test_drop_start_too_large_by_bytes_or_by_file_count():
    by_bytes = fixed_python_story().mine(max_start_bytes=10).dropped
    assert_drop(by_bytes, DropReason.START_TOO_LARGE, "2 files")
    by_count = fixed_python_story().mine(max_files=1).dropped
    assert_drop(by_count, DropReason.START_TOO_LARGE, "limits 1 files")


def test_drop_path_escapes_root_when_the_fix_wrote_outside_the_project():
    drop = (
        python_story()
        .write("/usr/lib/python3/dist-packages/calc_patch.py", "ADD = 1\n")
        .run("python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    assert_drop(drop, DropReason.PATH_ESCAPES_ROOT, "/usr/lib/python3/dist-packages/calc_patch.py")


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
    assert_drop(drop, DropReason.PATH_ESCAPES_ROOT, "outside the project root")


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
        "secret_in_reference",
        "miner_failed",
        "check_manifest_unseen",
        "service_unavailable",
        "dependency_unavailable_offline",
        # the LLM families' (tests/tasks_review/core/families)
        "llm_timeout",
        "llm_bad_json",
        "llm_schema_mismatch",
        "llm_refused",
        "llm_error",
        "llm_declined",
        "check_not_structured",
        "no_new_tests",
        "instruction_misses_interface",
        "qa_answer_not_in_output",
        "qa_input_from_network",
        "qa_input_unknown",
        "qa_answer_file_exists",
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
    assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "package.json")
