"""Shell builtins: where the following commands run, and what a sourced script may have done."""

from __future__ import annotations

import pytest

from .helpers import LOST, UNCERTAIN, after, bash, cc, files_of, run

KNOWN = {"a.py": "a\n"}
EVERYTHING_LOST = {"a.py": LOST, "**": UNCERTAIN}


def test_sourcing_a_virtualenv_activation_marks_nothing_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "source .venv/bin/activate && pytest")
    assert files_of(b) == {"a.py": "a\n"}


@pytest.mark.parametrize("command", ["source scripts/setup.sh", ". ./build.sh", 'eval "$(x)"'])
def test_sourced_scripts_and_eval_make_the_directory_uncertain(command):
    assert after(command, files=KNOWN) == EVERYTHING_LOST


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
    assert after(command, files=KNOWN) == EVERYTHING_LOST
