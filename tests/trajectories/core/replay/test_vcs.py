"""Version control and patches: git's moves and removals are certain, whatever restores content
from the repository loses it, and patches whose text is in the trajectory apply."""

from __future__ import annotations

import pytest

from .helpers import LOST, UNCERTAIN, after, bash, cc, files_of, presumed_under

KNOWN = {"a.py": "a\n", "b.py": "b\n"}
EVERYTHING_LOST = {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}
DIFF = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n one\n-two\n+deux\n"


@pytest.mark.parametrize(
    "command, expected",
    [
        ("git checkout -- a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("git stash", {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}),
    ],
)
def test_git_restoring_content_loses_what_it_touched(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        ("git restore a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("git restore .", EVERYTHING_LOST),
        ("git reset --hard HEAD~1", EVERYTHING_LOST),
        ("git switch main", EVERYTHING_LOST),
        ("git checkout main", EVERYTHING_LOST),
        ("git pull", EVERYTHING_LOST),
        ("git format-patch -1 HEAD", presumed_under(KNOWN)),  # writes new files beside
        ("git lfs pull", EVERYTHING_LOST),
    ],
)
def test_git_commands_that_rewrite_the_worktree_lose_it(command, expected):
    assert after(command, files=KNOWN) == expected


def test_git_status_diff_and_log_mark_nothing_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "git status && git diff && git log --oneline -5")
    assert files_of(b) == {"a.py": "a\n"}


@pytest.mark.parametrize(
    "command",
    [
        "git restore --staged a.py",
        "git reset --soft HEAD~1",
        "git checkout -b feature",
        "git switch -c feature",
        "git stash list",
        "git rm --cached a.py",
    ],
)
def test_git_commands_that_leave_the_worktree_alone_change_nothing(command):
    assert after(command, files=KNOWN) == KNOWN


def test_git_mv_and_rm_move_and_remove_known_files():
    assert after("git mv a.py c.py && git rm b.py", files=KNOWN) == {"c.py": "a\n"}
    assert after("git rm -r src", files={"a.py": "a\n", "src/b.py": "b\n"}) == {"a.py": "a\n"}


def test_git_clone_makes_the_new_checkout_uncertain():
    url = "https://github.com/x/lib.git"
    assert after(f"git clone {url}", files=KNOWN) == {**KNOWN, "lib/**": UNCERTAIN}
    assert after(f"git clone {url} vendor/lib", files=KNOWN) == {
        **KNOWN,
        "vendor/lib/**": UNCERTAIN,
    }


def test_gh_commands_that_check_out_or_download_make_the_directory_uncertain():
    assert after("gh pr checkout 12", files=KNOWN) == EVERYTHING_LOST
    assert after("gh pr view 12", files=KNOWN) == KNOWN


def test_git_apply_of_a_known_patch_file():
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n one\n-two\n+deux\n"
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "one\ntwo\n"}, "ok")
    b.call("Write", {"file_path": "/repo/fix.patch", "content": diff}, "ok")
    bash(b, "git apply fix.patch")
    assert files_of(b)["a.py"] == "one\ndeux\n"


def test_git_apply_that_only_checks_or_touches_the_index_changes_nothing():
    files = {"a.py": "one\ntwo\n", "fix.patch": DIFF}
    assert after("git apply --check fix.patch", files=files) == files
    assert after("git apply --cached fix.patch", files=files) == files


def test_patch_applies_a_known_patch_from_standard_input():
    files = {"a.py": "one\ntwo\n", "fix.patch": DIFF}
    assert after("patch -p1 < fix.patch", files=files) == {**files, "a.py": "one\ndeux\n"}


def test_a_patch_the_replay_cannot_read_or_reverse_loses_the_directory():
    assert after("patch -p1 < missing.patch", files=KNOWN) == EVERYTHING_LOST
    files = {"a.py": "one\ntwo\n", "fix.patch": DIFF}
    assert after("patch -R -p1 < fix.patch", files=files) == {
        "a.py": LOST,
        "fix.patch": LOST,
        "**": UNCERTAIN,
    }


def test_codex_apply_patch_run_from_the_shell_applies():
    command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: c.py\n+c\n*** End Patch\nEOF"
    assert after(command, files=KNOWN) == {**KNOWN, "c.py": "c\n"}


def test_git_dash_c_runs_git_elsewhere_and_leaves_the_shell_where_it_was():
    assert after("git -C src restore a.py && echo x > c.txt", files=KNOWN) == {
        **KNOWN,
        "src/a.py": LOST,
        "c.txt": "x\n",
    }


def test_patch_dash_d_applies_in_that_directory_and_leaves_the_shell_where_it_was():
    files = {"src/a.py": "one\ntwo\n", "fix.patch": DIFF}
    assert after("patch -d src -p1 < fix.patch && echo x > after.txt", files=files) == {
        "src/a.py": "one\ndeux\n",
        "fix.patch": DIFF,
        "after.txt": "x\n",
    }
