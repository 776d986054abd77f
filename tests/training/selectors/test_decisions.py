"""The decision ladder's words: each rung says what the latest eval run shows for it."""

from __future__ import annotations

from training.selectors.decisions import _best


def test_a_rung_with_no_rollouts_says_so_with_the_right_article():
    assert _best("adapter", [], 0) == "No rollouts with an adapter in the latest eval run."
    assert _best("prompt version", [], 1) == (
        "No rollouts with a prompt version in the latest eval run."
    )
