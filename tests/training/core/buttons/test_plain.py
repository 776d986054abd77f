"""Is a behaviour a plain if/then rule? The verdict the decision page shows, with its reason."""

from __future__ import annotations

import pytest

from training.core.buttons import plain_rule
from training.core.catalogue import catalogue
from training.core.spec import BehaviourSpec, ForbiddenRule, RewardOptions, load_spec


def spec(**fields) -> BehaviourSpec:
    document = {"slug": "synthetic", "title": "A synthetic behaviour", **fields}
    return load_spec(document)


def forbidding(*names: str) -> BehaviourSpec:
    # load_spec refuses a spec without expectations (it would score 1 without forbidden hits),
    # so a forbidden-only rule is built directly, as the Django side may hold one.
    return BehaviourSpec(
        slug="forbidden-only",
        title="Forbidden only",
        description="",
        version=1,
        expected_actions=(),
        evidence=(),
        forbidden=tuple(ForbiddenRule(name) for name in names),
        options=RewardOptions(),
    )


def test_read_before_edit_is_a_plain_rule_kept_in_a_fixed_order():
    verdict = plain_rule(catalogue()["read-before-edit"])
    assert (verdict.plain, verdict.form) == (True, "order")
    assert verdict.hookable == ("edit_unread_file", "order")
    assert verdict.reason.startswith("A plain rule: read any file before you edit any file")
    assert "Build the button, don't train" in verdict.reason
    assert "blind edits" in verdict.reason


@pytest.mark.parametrize(
    "slug",
    [
        "failing-test-repair",
        "focused-check-before-finishing",
        "no-test-tampering",
        "safe-dependency-update",
        "stop-when-credentials-missing",
    ],
)
def test_behaviours_that_ask_for_evidence_are_not_plain_rules_and_say_which(slug):
    behaviour = catalogue()[slug]
    verdict = plain_rule(behaviour)
    assert not verdict.plain and verdict.form is None
    assert verdict.reason.startswith("Not a plain rule: it asks for evidence")
    for item in behaviour.evidence:
        assert item.label in verdict.reason
    assert verdict.hookable == tuple(rule.name for rule in behaviour.forbidden)
    assert ("A hook can still refuse its forbidden actions" in verdict.reason) == bool(
        behaviour.forbidden
    )


def test_a_spec_that_only_forbids_actions_is_a_plain_rule():
    verdict = plain_rule(forbidding("force_push", "pipe_download_to_shell"))
    assert (verdict.plain, verdict.form) == (True, "forbidden")
    assert verdict.hookable == ("force_push", "pipe_download_to_shell")
    assert "it only forbids actions (never force-push" in verdict.reason
    assert "pipe a downloaded script into a shell" in verdict.reason


def test_a_spec_that_neither_expects_nor_forbids_is_not_a_plain_rule():
    verdict = plain_rule(forbidding())
    assert not verdict.plain
    assert verdict.reason == "Not a plain rule: it neither expects nor forbids anything."


def test_two_commands_named_by_their_argv_in_a_fixed_order_are_a_plain_rule():
    verdict = plain_rule(
        spec(
            expected_actions=[
                {"kind": "shell", "argv_prefix": ["pytest"], "label": "run pytest"},
                {"kind": "shell", "argv_prefix": ["git", "push"], "label": "push"},
            ]
        )
    )
    assert (verdict.plain, verdict.form) == (True, "order")
    assert verdict.reason.startswith("A plain rule: run `pytest` before you run `git push`.")
    assert "a hook refuses to run `git push` until the agent has done this: run `pytest`." in (
        verdict.reason
    )


def test_concrete_file_actions_keep_their_paths_in_the_reason():
    verdict = plain_rule(
        spec(
            expected_actions=[
                {"kind": "read", "path": "docs/CONTRIBUTING.md"},
                {"kind": "write", "path": "{CHANGELOG.md,NEWS.md}"},
            ]
        )
    )
    assert verdict.plain
    assert verdict.reason.startswith(
        "A plain rule: read docs/CONTRIBUTING.md before you write CHANGELOG.md or NEWS.md."
    )


def test_two_actions_in_any_order_are_not_a_plain_rule():
    verdict = plain_rule(
        spec(
            order_required=False,
            expected_actions=[{"kind": "read", "path": "a.py"}, {"kind": "edit", "path": "a.py"}],
            forbidden=[{"name": "force_push"}],
        )
    )
    assert not verdict.plain
    assert "may come in any order" in verdict.reason
    assert verdict.reason.endswith("its forbidden actions (force pushes) as a script decision.")


def test_an_action_known_only_by_its_outcome_is_not_concrete():
    verdict = plain_rule(
        spec(
            expected_actions=[
                {"kind": "edit", "path": "src/**"},
                {"kind": "shell", "check": "test", "outcome": "passed", "label": "tests pass"},
            ]
        )
    )
    assert not verdict.plain
    assert "“tests pass” asks for a command that passed, which is known only after it ran" in (
        verdict.reason
    )


def test_a_kind_of_check_is_not_a_command_a_hook_can_name():
    verdict = plain_rule(
        spec(
            expected_actions=[
                {"kind": "shell", "check": "lint", "label": "lint"},
                {"kind": "shell", "argv_prefix": ["git", "commit"], "label": "commit"},
            ]
        )
    )
    assert not verdict.plain
    assert "“lint” asks for a kind of check (lint), not a command" in verdict.reason


def test_more_than_two_actions_are_not_a_plain_rule():
    verdict = plain_rule(
        spec(
            expected_actions=[
                {"kind": "read", "path": "a.py", "label": "read a"},
                {"kind": "edit", "path": "a.py", "label": "edit a"},
                {"kind": "shell", "argv_prefix": ["pytest"], "label": "test"},
            ]
        )
    )
    assert not verdict.plain
    assert "it expects 3 actions (read a; edit a; test); a plain rule orders exactly two." in (
        verdict.reason
    )
