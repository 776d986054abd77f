"""Stream editors: with ``-i`` the files they name are lost, without it they only print."""

from __future__ import annotations

import pytest

from .helpers import LOST, after, presumed_under

KNOWN = {"a.py": "a\n", "b.py": "b\n"}


@pytest.mark.parametrize(
    "command, expected",
    [
        ("sed -i 's/a/b/' a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("sed -i.bak -e 's/a/b/' a.py b.py", {"a.py": LOST, "b.py": LOST}),
        ("sed -n '1,5p' a.py", {"a.py": "a\n", "b.py": "b\n"}),
        ("perl -pi -e 's/a/b/' *.py", {"a.py": LOST, "b.py": LOST}),
    ],
)
def test_in_place_edits_lose_the_files_they_name(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        # BSD sed takes the backup suffix as its own argument: '' is not the script.
        ("sed -i '' 's/a/b/' a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("sed --in-place=.orig 's/a/b/' b.py", {"a.py": "a\n", "b.py": LOST}),
        ("sed -f fix.sed -i a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("sed -i 's/a/b/'", KNOWN),
    ],
)
def test_sed_finds_the_files_after_its_options_and_script(command, expected):
    assert after(command, files=KNOWN) == expected


def test_perl_without_in_place_is_an_interpreter():
    assert after("perl -e 'print 1'", files=KNOWN) == KNOWN
    assert after("perl fix.pl", files=KNOWN) == presumed_under(KNOWN)


@pytest.mark.parametrize(
    "command, expected",
    [
        ("awk -i inplace '{print}' a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("awk '{print $1}' a.py", KNOWN),
        ("awk '{print > \"out.txt\"}' a.py", presumed_under(KNOWN)),
        ("gawk 'BEGIN { system(\"make\") }'", presumed_under(KNOWN)),
    ],
)
def test_awk_loses_what_it_edits_in_place_or_writes_from_its_program(command, expected):
    assert after(command, files=KNOWN) == expected
