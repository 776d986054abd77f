"""Downloads write files whose content the trajectory does not hold: they are lost."""

from __future__ import annotations

import pytest

from .helpers import LOST, after, bash, cc, files_of, presumed_under

KNOWN = {"a.py": "a\n"}


def test_curl_to_standard_output_marks_nothing_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "curl -s https://example.com")
    assert files_of(b) == {"a.py": "a\n"}


@pytest.mark.parametrize(
    "command, lost",
    [
        ("curl -o page.html https://example.com", "page.html"),
        ("curl -O https://example.com/files/data.csv", "data.csv"),
        ("wget https://example.com/files/data.csv", "data.csv"),
        ("wget https://example.com/", "index.html"),
        ("wget -O data.csv https://example.com/x", "data.csv"),
    ],
)
def test_downloads_lose_the_file_they_save(command, lost):
    assert after(command, files=KNOWN) == {**KNOWN, lost: LOST}


@pytest.mark.parametrize(
    "command", ["curl -o - https://example.com", "wget -qO- https://example.com/install.sh"]
)
def test_downloads_to_the_terminal_change_nothing(command):
    assert after(command, files=KNOWN) == KNOWN


def test_curl_saving_under_a_name_the_url_does_not_give_makes_the_directory_uncertain():
    assert after("curl -sSLO https://example.com/", files=KNOWN) == presumed_under(KNOWN)
