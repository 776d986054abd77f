"""The report: counts merged by type, the tokens of a text redacted in steps counted, and the
package docstring's example."""

from __future__ import annotations

import doctest
import string

from trajectories.core import redact as redact_module
from trajectories.core.redact import merge_counts, redact, replaced_counts

from .planted import rand


def test_counts_merge_by_type():
    assert merge_counts([{"email": 1}, {"jwt": 2, "email": 3}, {}]) == {"email": 4, "jwt": 2}


def test_the_package_docstring_example_runs():
    failures, tried = doctest.testmod(redact_module, report=False)
    assert tried > 0 and failures == 0


def test_the_tokens_in_a_text_redacted_in_steps_are_counted_by_type():
    once = redact("a " + "ghp_" + rand(36) + " b ann@corp.eu").value
    twice = redact(once + "\nAKIA" + rand(16, string.ascii_uppercase)).value
    assert replaced_counts(twice) == {"aws_access_key_id": 1, "email": 1, "github_token": 1}
    assert replaced_counts("no tokens, [REDACTED] alone is not one") == {}
