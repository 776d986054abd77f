"""The "prompt" decision: an AGENTS.md / CLAUDE.md rule written from the spec, in plain words."""

from __future__ import annotations

import json

import pytest

from training.core.buttons import prompt_rule
from training.core.buttons.words import action_words, evidence_words, forbidden_words
from training.core.catalogue import catalogue
from training.core.spec import load_spec

SLUGS = sorted(catalogue())


@pytest.mark.parametrize("slug", SLUGS)
def test_every_catalogue_behaviour_becomes_a_rule_naming_what_to_do_show_and_never_do(slug):
    spec = catalogue()[slug]
    text = prompt_rule(spec)
    assert text.startswith(f"## {spec.title}\n\n{spec.description}\n")
    for action in spec.expected_actions:
        assert action_words(action) in text
    for item in spec.evidence:
        assert f"- {evidence_words(item)}." in text
    for rule in spec.forbidden:
        assert f"- {forbidden_words(rule)}." in text
    assert ("Never:" in text) == bool(spec.forbidden)
    assert text.endswith(f"(traj2env behaviour {slug}, spec version 1)")


@pytest.mark.parametrize("slug", SLUGS)
def test_the_rule_is_prose_not_json(slug):
    text = prompt_rule(catalogue()[slug])
    assert not any(mark in text for mark in ("{", "}", '":', "[]", "null"))
    with pytest.raises(ValueError):
        json.loads(text)


@pytest.mark.parametrize("slug", SLUGS)
def test_the_same_spec_gives_the_same_text_even_after_a_round_trip_through_json(slug):
    spec = catalogue()[slug]
    again = load_spec(json.dumps(spec.to_dict()))
    assert prompt_rule(again) == prompt_rule(spec)


def test_ordered_actions_are_numbered_and_say_what_each_is_for():
    text = prompt_rule(catalogue()["safe-dependency-update"])
    assert "Do these in this order:\n1. Edit the dependency manifest: edit a file matching " in text
    assert "pyproject.toml, setup.cfg, setup.py, package.json, Cargo.toml, go.mod or Gemfile." in (
        text
    )
    assert "\n2. Run the tests, passing: run the tests and see them pass.\n" in text


def test_actions_in_any_order_are_a_list_and_generated_labels_are_not_repeated():
    spec = load_spec(
        {
            "slug": "notes",
            "title": "Keep notes",
            "order_required": False,
            "expected_actions": [
                {"kind": "write", "path": "NOTES.md"},
                {"kind": "shell", "argv_prefix": ["git", "add"], "outcome": "passed"},
            ],
        }
    )
    text = prompt_rule(spec)
    assert "Do all of these, in any order:\n- Write NOTES.md.\n" in text
    assert "- Run `git add` and see it pass.\n" in text
    assert "(traj2env behaviour notes)" in text


def test_the_rule_names_the_tasks_own_test_files_and_extra_credential_files():
    spec = load_spec(
        {
            "slug": "careful",
            "title": "Careful",
            "evidence": [{"kind": "file_state", "path": "dist/*.whl", "state": "exists"}],
            "forbidden": [
                {"name": "tamper_with_tests", "tests": ["tests/test_{api,db}.py"]},
                {"name": "read_credentials", "paths": ["secrets/*.json"]},
            ],
        }
    )
    text = prompt_rule(spec)
    assert "- a file matching dist/*.whl exists when you finish." in text
    assert "the task's tests (tests/test_api.py, tests/test_db.py)" in text
    assert "~/.netrc, secrets/*.json and the like" in text
