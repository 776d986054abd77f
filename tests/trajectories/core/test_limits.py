"""Text limits: a value over its field's limit is refused in words, and a message quotes at
most a short, ellipsised form of what was typed."""

from __future__ import annotations

import doctest

from trajectories.core import limits


def test_the_examples_in_the_docstring_hold():
    failures, tried = doctest.testmod(limits, report=False)
    assert tried and not failures


def test_a_200_kb_value_is_echoed_in_under_100_characters_with_its_length():
    shown = limits.echo("x" * 204_800)
    assert len(shown) < 100 and shown.endswith("…' (204,800 characters)")


def test_every_field_over_its_limit_is_named_at_once():
    found = limits.fields_too_long(
        {"name": "n" * 121, "version": "1", "base_model": "m" * 201},
        {"name": limits.NAME, "version": 20, "base_model": limits.TITLE},
    )
    assert found == {
        "name": "name is 121 characters long; at most 120 are allowed",
        "base_model": "base model is 201 characters long; at most 200 are allowed",
    }


def test_a_nul_character_is_refused_whatever_the_length_and_only_a_kill_drops_it():
    assert limits.refusal("the comment", "ok\x00", limits.COMMENT) == (
        "the comment holds a NUL character (code 0), which cannot be stored"
    )
    assert limits.refusal("the comment", "ok", limits.COMMENT) is None
    assert limits.refusal("the note", "n" * 201, limits.TITLE) == limits.too_long(
        "the note", "n" * 201, limits.TITLE
    )
    assert limits.storable("\x00stop\x00") == "stop"
