"""Formatters and fixers lose what they rewrite, unless every run reported changing nothing."""

from __future__ import annotations

import pytest

from .helpers import LOST, UNCERTAIN, after, bash, cc, files_of, presumed_under

KNOWN = {"a.py": "a\n", "b.py": "b\n"}


@pytest.mark.parametrize(
    "command, expected",
    [
        ("ruff check --fix b.py", {"a.py": "a\n", "b.py": LOST}),
        ("black .", presumed_under(KNOWN)),
    ],
)
def test_formatters_lose_their_targets(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command", ["isort a.py", "npx prettier --write a.py", "autopep8 -i a.py", "gofmt -w a.py"]
)
def test_a_formatter_named_on_one_file_loses_only_that_file(command):
    assert after(command, files=KNOWN) == {"a.py": LOST, "b.py": "b\n"}


def test_formatter_that_reports_changing_nothing_leaves_files_known():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.ts", "content": "x\n"}, "ok")
    bash(b, "npx biome check --write .", "Checked 12 files in 3ms. No fixes applied.")
    assert files_of(b) == {"a.ts": "x\n"}
    bash(b, "npx biome check --write .", "Checked 12 files in 3ms. Fixed 1 file.")
    assert files_of(b) == {"a.ts": LOST, "**": UNCERTAIN}


def test_each_run_of_a_formatter_needs_its_own_report_of_changing_nothing():
    output = "All done! ✨ 🍰 ✨\n1 file left unchanged."
    assert after("black .", output, files=KNOWN) == KNOWN
    assert after("black a.py && black b.py", output, files=KNOWN) == {"a.py": "a\n", "b.py": LOST}
    assert after("black .", "reformatted a.py\n1 file left unchanged.", files=KNOWN) == {
        "a.py": LOST,
        "b.py": LOST,
        "**": UNCERTAIN,
    }


@pytest.mark.parametrize("command", ["black --check .", "ruff format --check", "gofmt -l ."])
def test_formatters_asked_only_to_check_change_nothing(command):
    assert after(command, files=KNOWN) == KNOWN
