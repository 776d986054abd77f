"""Coreutils and findutils: printed text lands where it is redirected, ``rm``/``mv``/``cp`` change
known files with certainty, and what writes unnamed or unknown content is lost."""

from __future__ import annotations

import pytest

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import ChangeKind

from .helpers import LOST, after, bash, cc, files_of, presumed_under, render, run

KNOWN = {"a.py": "a\n", "src/b.py": "b\n"}


@pytest.mark.parametrize(
    "command, expected",
    [
        ("echo hello > a.txt", {"a.txt": "hello\n"}),
        ("echo -n 'no newline' > a.txt", {"a.txt": "no newline"}),
        ('echo "$HOME" > a.txt', {"a.txt": LOST}),
        ("printf 'x=%s\\n' 1 2 > a.txt", {"a.txt": "x=1\nx=2\n"}),
        ("printf '%d%%\\n' 42 > a.txt", {"a.txt": "42%\n"}),
        ("echo hello | tee a.txt b.txt", {"a.txt": "hello\n", "b.txt": "hello\n"}),
        ("mkdir -p out && touch out/empty.txt", {}),
    ],
)
def test_printed_text_lands_in_the_files_it_is_redirected_or_teed_to(command, expected):
    b = cc()
    bash(b, command)
    assert files_of(b) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        ("echo -e 'a\\nb' > a.txt", {"a.txt": LOST}),
        ("echo 'back\\slash' > a.txt", {"a.txt": LOST}),
        ("printf '%q' x > a.txt", {"a.txt": LOST}),
        ("printf '%d' abc > a.txt", {"a.txt": LOST}),
        ("printf 'plain\\t' > a.txt", {"a.txt": "plain\t"}),
    ],
)
def test_echo_and_printf_output_that_shells_disagree_on_is_lost(command, expected):
    assert after(command) == expected


def test_cat_carries_known_files_into_a_redirect_and_anything_else_is_lost():
    assert after("cat a.py src/b.py > both.py", files=KNOWN)["both.py"] == "a\nb\n"
    assert after("cat -n a.py > c.py", files=KNOWN)["c.py"] == LOST
    assert after("cat missing.py > c.py", files=KNOWN)["c.py"] == LOST


@pytest.mark.parametrize("command", ["cat a.py", "find . -name '*.py'"])
def test_cat_and_find_only_read(command):
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, command)
    assert files_of(b) == {"a.py": "a\n"}


def test_rm_mv_cp_and_touch_on_known_files():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    b.call("Write", {"file_path": "/repo/src/x.py", "content": "x\n"}, "ok")
    b.call("Write", {"file_path": "/repo/src/y.py", "content": "y\n"}, "ok")
    bash(b, "cp a.py copy.py && mv a.py moved.py && mv src lib && cp -r lib lib2")
    bash(b, "rm -rf lib2 && rm lib/y.py && touch lib/y.py && touch copy.py")
    assert files_of(b) == {
        "copy.py": "a\n",
        "moved.py": "a\n",
        "lib/x.py": "x\n",
        "lib/y.py": "",
    }


def test_mv_into_a_directory_and_rm_by_glob():
    b = cc()
    for name in ("a.py", "b.py", "c.txt"):
        b.call("Write", {"file_path": f"/repo/{name}", "content": name}, "ok")
    bash(b, "mkdir -p pkg && mv a.py b.py pkg/ && rm pkg/*.py && mv c.txt pkg")
    assert files_of(b) == {"pkg/c.txt": "c.txt"}


def test_mv_of_an_unknown_file_loses_the_destination():
    b = cc()
    bash(b, "mv old.py new.py")
    result, _ = run(b)
    assert render(result, MemoryBlobs()) == {"new.py": LOST}
    assert result.events[0].changes["old.py"].kind is ChangeKind.DELETED


def test_unlink_removes_like_rm_and_rmdir_chmod_change_no_content():
    assert after("unlink a.py", files=KNOWN) == {"src/b.py": "b\n"}
    assert after("rmdir src && chmod 600 a.py && chown me a.py", files=KNOWN) == KNOWN


def test_install_copies_like_cp_and_install_d_only_makes_directories():
    assert after("install -m 755 a.py bin/tool", files=KNOWN) == {**KNOWN, "bin/tool": "a\n"}
    assert after("install -d bin share", files=KNOWN) == KNOWN


@pytest.mark.parametrize(
    "command, lost",
    [
        ("ln -s a.py link.py", "link.py"),
        ("dd if=/dev/zero of=blob.bin bs=1k count=1", "blob.bin"),
        ("truncate -s 0 a.py", "a.py"),
    ],
)
def test_links_dd_and_truncate_lose_the_file_they_write(command, lost):
    assert after(command, files=KNOWN) == {**KNOWN, lost: LOST}


def test_a_link_named_only_by_its_target_makes_the_directory_uncertain():
    assert after("ln -s a.py", files=KNOWN) == presumed_under(KNOWN)


@pytest.mark.parametrize(
    "command, expected",
    [
        ("find src -name '*.pyc' -delete", presumed_under(KNOWN, "src")),
        ("find src -fprint list.txt", presumed_under(KNOWN, "src")),
        (
            "find . -name '*.py' -exec sed -i s/a/b/ {} +",
            presumed_under(KNOWN),
        ),
        ("find . -name '*.py' -exec grep -l TODO {} +", KNOWN),
    ],
)
def test_find_that_deletes_or_runs_a_writer_makes_the_searched_roots_uncertain(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        ("ls *.py | xargs sed -i s/a/b/", presumed_under(KNOWN)),
        ("ls *.py | xargs wc -l", KNOWN),
        ("ls | xargs pytest", KNOWN),
    ],
)
def test_xargs_running_a_writer_makes_the_directory_uncertain(command, expected):
    assert after(command, files=KNOWN) == expected
