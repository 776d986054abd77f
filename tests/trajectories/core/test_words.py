"""The article before a word made up at run time: "an adapter", "an SFT export"."""

from __future__ import annotations

import doctest

from trajectories.core import words


def test_the_examples_in_the_docstring_hold():
    failures, tried = doctest.testmod(words, report=False)
    assert tried and not failures


def test_a_plain_word_by_its_first_letter_and_an_initialism_by_its_letter_name():
    assert words.with_article("eval suite") == "an eval suite"
    assert words.with_article("OPENAI") == "an OPENAI"
    assert words.with_article("hook") == "a hook"
