"""What a rollout is scored in: the task's test files the world starts with, and the contents
each may hold at the end, travel with the facts, so the world settles tampering."""

from __future__ import annotations

import hashlib

import pytest

from tests.tasks_review.factories import START, make_candidate
from training.services.rollouts import _test_shas

pytestmark = pytest.mark.django_db


def test_the_tests_the_world_starts_with_are_known_by_their_contents():
    candidate = make_candidate(
        payload={"test_paths": ["tests/test_invoice.py", "tests/test_hidden.py"]},
        fix={"tests/test_invoice.py": b"def test_total():\n    assert True\n"},
    )
    start = hashlib.sha256(START["tests/test_invoice.py"]).hexdigest()
    fixed = hashlib.sha256(b"def test_total():\n    assert True\n").hexdigest()
    # A hidden test the start lacks (a build task's) is not the world's to keep.
    assert _test_shas(candidate) == {"tests/test_invoice.py": (start, fixed)}


def test_a_task_that_names_no_tests_asks_nothing_of_the_world():
    assert _test_shas(make_candidate()) == {}
