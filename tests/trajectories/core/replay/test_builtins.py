"""Shell builtins: where the following commands run, and what a sourced script may have done."""

from __future__ import annotations

import pytest

from .helpers import after, bash, cc, files_of, presumed_under, run

KNOWN = {"a.py": "a\n"}
PRESUMED = presumed_under(KNOWN)


def test_sourcing_a_virtualenv_activation_marks_nothing_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "source .venv/bin/activate && pytest")
    assert files_of(b) == {"a.py": "a\n"}


@pytest.mark.parametrize("command", ["source scripts/setup.sh", ". ./build.sh", 'eval "$(x)"'])
def test_sourced_scripts_and_eval_make_the_directory_uncertain(command):
    assert after(command, files=KNOWN) == PRESUMED


def test_eval_says_it_ran_a_constructed_command():
    b = cc()
    bash(b, 'eval "$(direnv export bash)"')
    result, _ = run(b)
    assert result.events[0].changes["**"].reason == "eval of a constructed command"


def test_pushd_and_popd_return_to_the_directory_pushed_from():
    assert after("pushd src && echo x > c.txt && popd && echo y > d.txt") == {
        "src/c.txt": "x\n",
        "d.txt": "y\n",
    }


@pytest.mark.parametrize("command", ["cd $WORK && echo x > b.txt", "cd - && echo x > b.txt"])
def test_after_cd_to_an_unknown_directory_relative_writes_are_uncertain(command):
    assert after(command, files=KNOWN) == PRESUMED


# How each shell says a `cd` failed: bash (interactive and `bash -c`), zsh (and Claude Code's
# `(eval)` wrapper), dash, fish.
CD_ERRORS = [
    "bash: cd: go: No such file or directory",
    "/bin/bash: line 1: cd: go: No such file or directory",
    "bash: line 3: cd: go: Not a directory",
    "(eval):cd:1: no such file or directory: go",
    "cd: no such file or directory: go",
    "sh: 1: cd: can't cd to go",
    "cd: The directory 'go' does not exist",
]


def go_then(b, command, output, *, code=1):
    """`cd go` (moved), then ``command`` with ``output``, then a write by a relative path."""
    b.call("Write", {"file_path": "/repo/go/go.mod", "content": "module x\n"}, "ok")
    bash(b, "cd go")
    bash(b, command, output, code=code)
    bash(b, "echo fixed > run.txt")
    return b


@pytest.mark.parametrize("error", CD_ERRORS)
def test_a_cd_the_shell_refused_leaves_the_directory_where_it_was(error):
    b = go_then(cc(), "cd go && ls", error)
    assert files_of(b) == {"go/go.mod": "module x\n", "go/run.txt": "fixed\n"}


def test_the_commands_chained_after_a_failed_cd_did_not_run_and_record_no_check():
    b = cc()
    bash(b, "cd tests && pytest -q", "bash: cd: tests: No such file or directory", code=1)
    bash(b, "pytest -q", "1 passed")
    result, _ = run(b)
    failed, passed = result.commands
    assert failed.check is None  # pytest never ran: its status is the cd's
    assert (passed.cwd, passed.check is not None) == (".", True)


def test_what_follows_a_failed_cd_after_a_semicolon_or_an_or_still_runs():
    b = cc()
    bash(
        b,
        "cd nowhere; echo a > a.txt; cd nowhere || echo b > b.txt",
        "bash: cd: nowhere: No such file or directory",
        code=1,
    )
    assert files_of(b) == {"a.txt": "<lost>", "b.txt": "<lost>"}


def test_a_failed_command_whose_output_does_not_name_the_cd_still_moved():
    b = go_then(cc(), "cd go && go test ./...", "--- FAIL: TestRun\nFAIL")
    assert "go/go/run.txt" in files_of(b)  # the cd worked: go/go exists as far as the log says


def test_a_cd_that_succeeded_moves_the_directory_for_the_next_call():
    b = go_then(cc(), "ls", "go.mod", code=0)
    assert files_of(b) == {"go/go.mod": "module x\n", "go/run.txt": "fixed\n"}


def test_claude_codes_shell_cwd_reset_line_moves_the_shell_back():
    b = cc()
    bash(b, "cd /tmp && ls", "a\nb\n\nShell cwd was reset to /repo")
    bash(b, "echo x > here.txt")
    assert files_of(b) == {"here.txt": "x\n"}


def test_a_failed_cd_into_a_known_file_stays_even_when_the_output_was_cut():
    b = cc()
    b.call("Write", {"file_path": "/repo/go", "content": "not a folder\n"}, "ok")
    bash(b, "cd go && echo x > a.txt", "", code=1)
    bash(b, "echo y > b.txt")
    assert files_of(b) == {"go": "not a folder\n", "b.txt": "y\n"}
