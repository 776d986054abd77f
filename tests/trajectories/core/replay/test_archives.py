"""Archives: an extraction makes where it extracted uncertain, creating one loses the archive."""

from __future__ import annotations

import pytest

from .helpers import LOST, UNCERTAIN, after

KNOWN = {"a.py": "a\n", "src/b.py": "b\n"}


@pytest.mark.parametrize(
    "command, expected",
    [
        ("tar -xzf deps.tgz -C vendor", {**KNOWN, "vendor/**": UNCERTAIN}),
        ("unzip deps.zip -d vendor", {**KNOWN, "vendor/**": UNCERTAIN}),
        ("unzip deps.zip", {"a.py": LOST, "src/b.py": LOST, "**": UNCERTAIN}),
        ("tar -czf out.tgz src", {**KNOWN, "out.tgz": LOST}),
        ("tar --create --file out.tar src", {**KNOWN, "out.tar": LOST}),
    ],
)
def test_extracting_makes_the_target_uncertain_and_creating_loses_the_archive(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize("command", ["tar -tf deps.tgz", "unzip -l deps.zip"])
def test_listing_an_archive_changes_nothing(command):
    assert after(command, files=KNOWN) == KNOWN
