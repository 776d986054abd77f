"""The shell walk: redirections, here-documents, pipes, subshells and chains run as the shell would,
checks recorded with whether their exit status is their own, and programs without a handler.
"""

from __future__ import annotations

import pytest

from trajectories.core.replay.effects import Copy, Delete, Write, run_script
from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import (
    LOST,
    ROOT,
    FakeFiles,
    after,
    bash,
    cc,
    files_of,
    only_command,
    presumed_under,
)

KNOWN = {"a.py": "a\n", "b.py": "b\n"}

# -- redirections and here-documents ------------------------------------------------------------


@pytest.mark.parametrize(
    "command, expected",
    [
        ("cat > a.txt <<'EOF'\nhello $USER\nEOF", {"a.txt": "hello $USER\n"}),
        ("cat <<-EOF > a.txt\n\tindented\n\tEOF", {"a.txt": "indented\n"}),
        ("cat > a.txt <<EOF\nhello $USER\nEOF", {"a.txt": LOST}),
        ("echo x >/dev/null 2>&1", {}),
        ("echo one > a.txt > b.txt", {"a.txt": "", "b.txt": "one\n"}),
    ],
)
def test_redirections_and_here_documents_write_what_the_command_printed(command, expected):
    b = cc()
    bash(b, command)
    assert files_of(b) == expected


def test_append_to_known_content_stays_known_and_to_unknown_is_lost():
    b = cc()
    bash(b, "echo one > a.txt && echo two >> a.txt && echo three >> b.txt")
    assert files_of(b) == {"a.txt": "one\ntwo\n", "b.txt": LOST}


def test_stderr_of_a_command_that_prints_no_errors_is_empty_and_of_any_other_unknown():
    assert after("echo x 2> err.txt") == {"err.txt": ""}
    assert after("ls 2> err.txt") == {"err.txt": LOST}


def test_a_pipe_carries_known_output_to_the_next_command():
    assert after("echo x | tee c.txt | cat > d.txt") == {"c.txt": "x\n", "d.txt": "x\n"}


def test_output_to_a_path_with_an_expansion_makes_its_literal_directory_uncertain():
    expected = presumed_under({"a.py": "a\n", "src/b.py": "b\n"}, "src")
    assert after("echo x > src/$NAME.py", files={"a.py": "a\n", "src/b.py": "b\n"}) == expected


def test_output_to_a_home_directory_outside_the_project_changes_nothing():
    assert after("echo x > ~/notes.txt", files=KNOWN) == KNOWN


# -- subshells and chains -----------------------------------------------------------------------


def test_a_subshell_keeps_its_cd_to_itself():
    assert after("(cd src && echo y > b.txt) && echo z > c.txt") == {
        "src/b.txt": "y\n",
        "c.txt": "z\n",
    }


def test_a_later_command_sees_what_an_earlier_one_wrote():
    files = FakeFiles()
    run_script("echo x > a && cp a b && rm a", ROOT, files)
    assert files.effects == [
        Write("/repo/a", "x\n", reason="output redirection"),
        Copy("/repo/a", "/repo/b"),
        Delete("/repo/a"),
    ]


def test_the_walk_reports_where_the_line_ended_and_where_each_check_ran():
    run = run_script("cd api && go test ./...", ROOT, FakeFiles())
    assert run.cwd == "/repo/api"
    (found,) = run.checks
    assert (found.segment, found.cwd, found.spec.runner) == ("go test ./...", "/repo/api", "go")


@pytest.mark.parametrize(
    "command, masked",
    [
        ("go test ./...", False),
        ("go test ./... && echo ok", False),
        ("cd api && go test ./...", False),
        ("go test ./... 2>&1 | tail -20", True),
        ("set -o pipefail; go test ./... | tail -20", False),
        ("go test ./... || true", True),
        ("go test ./...; echo exit=$?", True),
        ("make build || go test ./...", True),
        ("npm ci && npm test", True),
        ("cd api && source .venv/bin/activate && export CI=1 && pytest", False),
    ],
)
def test_check_says_when_the_recorded_status_is_not_its_own(command, masked):
    b = AtifBuilder("claude-code", root=ROOT)
    b.call("Bash", {"command": command}, "")
    check = only_command(b).check
    assert check is not None and check.masked is masked


# -- programs without a handler -----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "grep -rn TODO . | head",
        "rg foo",
        "wc -l a.py",
        "if [ -f a.py ]; then echo yes; fi",
        "for f in *.py; do wc -l $f; done",
        "which python && python --version",
    ],
)
def test_programs_that_only_read_mark_nothing_lost(command):
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, command)
    assert files_of(b) == {"a.py": "a\n"}


@pytest.mark.parametrize("command", ["pytest -q", "go test ./...", "cargo clippy", "tsc --noEmit"])
def test_checks_do_not_rewrite_sources(command):
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, command)
    assert files_of(b) == {"a.py": "a\n"}


@pytest.mark.parametrize(
    "command, expected",
    [
        ("./scripts/generate", presumed_under(KNOWN)),
        ("echo x > $OUT", presumed_under(KNOWN)),
    ],
)
def test_unknown_programs_and_unknown_targets_make_the_directory_uncertain(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command",
    ["frobnicate --all", "$EDITOR a.py", "f() { rm -rf src; }", "case $x in a) rm a.py;; esac"],
)
def test_what_the_walk_cannot_follow_makes_the_directory_uncertain(command):
    assert after(command, files=KNOWN) == presumed_under(KNOWN)


def test_a_version_query_changes_nothing_whatever_the_program():
    assert after("frobnicate --version", files=KNOWN) == KNOWN


def test_wrappers_are_seen_through_to_the_program_they_run():
    assert after("sudo timeout 60 env FOO=1 rm a.py", files=KNOWN) == {"b.py": "b\n"}
