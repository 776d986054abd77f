"""Replay rebuilds the project's files at every tool call, and says what it cannot know.

Each test replays a small hand-written trajectory and asserts the exact end state (see
``helpers``). What shell commands do to files is tested per family of programs beside this file
(``test_coreutils``, ``test_vcs`` …), file tools in ``test_file_tools``, patches in
``test_patching``; here are the outcomes of shell commands, paths and working directories.
"""

from __future__ import annotations

import pytest

from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import LOST, UNCERTAIN, bash, cc, codex, files_of, numbered, render, run

# -- shell commands: outcomes and uncertainty ---------------------------------------------------


def test_a_failed_command_turns_its_certain_writes_into_lost():
    b = cc()
    bash(b, "echo x > a.txt && false", code=1)
    assert files_of(b) == {"a.txt": LOST}


def test_refused_command_changes_nothing():
    b = cc()
    b.call(
        "Bash",
        {"command": "rm -rf /repo"},
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        error=True,
    )
    assert files_of(b) == {}


def test_uncertain_tree_covers_unseen_files_until_they_are_read():
    b = cc()
    b.call("Write", {"file_path": "/repo/src/a.py", "content": "a\n"}, "ok")
    bash(b, "cd src && python codegen.py")
    b.call("Read", {"file_path": "/repo/src/a.py"}, numbered("regenerated\n"))
    assert files_of(b) == {"src/a.py": "regenerated\n", "src/**": UNCERTAIN}


# -- paths and working directories ------------------------------------------------------------


def test_absolute_and_relative_paths_share_one_key():
    b = cc()
    b.call("Write", {"file_path": "/repo/src/a.py", "content": "1\n"}, "ok")
    bash(b, "echo 2 > src/./a.py")
    assert files_of(b) == {"src/a.py": "2\n"}


@pytest.mark.parametrize(
    "path, flag",
    [
        ("/etc/passwd", "escapes_root"),
        ("/repo/../../etc/passwd", "escapes_root"),
        ("/tmp/scratch.py", "escapes_root"),
        ("C:\\Users\\me\\app.py", "windows_path"),
        ("src\\app.py", "windows_path"),
    ],
)
def test_paths_outside_the_root_and_windows_paths_are_flagged_never_written(path, flag):
    b = cc()
    b.call("Write", {"file_path": path, "content": "x"}, "ok")
    result, _ = run(b)
    assert result.final_state == {}
    (change,) = result.events[0].changes.values()
    assert getattr(change, flag) is True
    assert change.flagged


def test_shell_writes_outside_the_root_are_flagged():
    b = cc()
    bash(b, "echo x > ../../outside.txt && echo y > /tmp/t.txt")
    result, _ = run(b)
    assert result.final_state == {}
    assert all(c.escapes_root for c in result.events[0].changes.values())


def test_home_directory_resolves_when_the_root_lies_in_it():
    b = AtifBuilder("claude-code", root="/home/me/proj")
    bash(b, "echo x > ~/proj/a.txt && echo y > ~/.bashrc")
    assert files_of(b, root="/home/me/proj") == {"a.txt": "x\n"}


def test_cd_persists_between_claude_code_bash_calls():
    b = cc()
    bash(b, "cd pkg")
    bash(b, "echo x > a.txt && (cd sub && echo y > b.txt) && echo z > c.txt")
    assert files_of(b) == {"pkg/a.txt": "x\n", "pkg/sub/b.txt": "y\n", "pkg/c.txt": "z\n"}


def test_recorded_cwd_in_side_data_wins():
    b = cc()
    bash(b, "cd pkg")
    bash(b, "echo x > a.txt", cwd="/repo/other")
    assert files_of(b) == {"other/a.txt": "x\n"}


def test_codex_and_pi_commands_start_in_their_workdir_each_time():
    b = codex()
    b.call("exec_command", {"cmd": "cd pkg"}, "Process exited with code 0\nOutput:\n")
    b.call("exec_command", {"cmd": "echo x > a.txt"}, "Process exited with code 0\nOutput:\n")
    b.call(
        "exec_command",
        {"cmd": "echo y > b.txt", "workdir": "/repo/w"},
        "Process exited with code 0\nOutput:\n",
    )
    assert files_of(b) == {"a.txt": "x\n", "w/b.txt": "y\n"}


def test_root_is_inferred_from_the_files_touched_when_unrecorded():
    b = AtifBuilder("claude-code", root=None)
    b.call("Write", {"file_path": "/work/app/src/a.py", "content": "a"}, "ok")
    b.call("Write", {"file_path": "/work/app/tests/b.py", "content": "b"}, "ok")
    result, _ = run(b, root=None)
    assert result.root == "/work/app"
    assert set(result.final_state) == {"src/a.py", "tests/b.py"}


def test_plain_atif_from_harbor_terminus_replays_keystrokes():
    b = AtifBuilder("terminus-2", root=None)
    b.call("bash_command", {"keystrokes": "cd /app\n", "duration": 0.1}, "")
    b.call("bash_command", {"keystrokes": "printf 'Hello, world!\\n' > hello.txt\n"}, "")
    b.call("bash_command", {"keystrokes": "q"}, "")  # input to a pager, not a command
    result, blobs = run(b, root=None)
    assert render(result, blobs) == {"app/hello.txt": "Hello, world!\n"}
    assert [c.command for c in result.commands] == [
        "cd /app",
        "printf 'Hello, world!\\n' > hello.txt",
    ]
