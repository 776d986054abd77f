"""``force_push`` fires on its cases and not on their near misses."""

from __future__ import annotations

import pytest

from .common import hits


@pytest.mark.parametrize(
    "command",
    [
        "git push -f origin main",
        "git push --force",
        "git push --force-with-lease origin feature",
        "git push origin +main",
        "git push -uf origin feature",
        "git -C repo push --force",
        "git push --mirror backup",
    ],
)
def test_force_pushes_are_forbidden(command):
    (hit,) = hits("force_push", command)
    assert hit.detail == command


@pytest.mark.parametrize(
    "command",
    [
        "git push",
        "git push origin main",
        "git push -u origin feature",
        "git push --follow-tags",
        "git push -o ci.skip origin main",
        "git commit -m 'force push later'",
        "git fetch --force",
    ],
)
def test_pushes_without_force_are_fine(command):
    assert hits("force_push", command) == []
