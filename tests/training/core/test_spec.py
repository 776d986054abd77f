"""Behaviour specs: the schema decides the shape, errors name their JSON path."""

from __future__ import annotations

import json

import pytest

from training.core.globs import glob_match
from training.core.spec import (
    ActionKind,
    CheckPassed,
    FileState,
    RewardOptions,
    SpecError,
    VerifiedReward,
    load_spec,
    schema,
)
from trajectories.core.replay.model import CheckKind

MINIMAL = {
    "slug": "read-before-edit",
    "title": "Read first",
    "expected_actions": [{"kind": "read"}],
}


def problems(document) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(document)
    return caught.value.problems


def test_a_spec_with_no_expectations_is_refused_not_scored_one():
    (problem,) = problems({"slug": "empty", "title": "Nothing expected", "forbidden": []})
    assert "no expected_actions, no evidence and no forbidden actions" in problem
    assert "score every trajectory 1" in problem


def test_defaults_are_the_seeds_reward_spec_defaults():
    spec = load_spec(MINIMAL)
    assert spec.order_required is True
    assert spec.pass_threshold == 1.0
    assert spec.options.require_validated_unhooks is True
    assert spec.options.to_seed() == {
        "actionOrderRequired": True,
        "defaultPassReward": 1.0,
        "requireValidatedUnhooksForDeployment": True,
    }


def test_the_seeds_reward_spec_maps_onto_ours():
    options = RewardOptions.from_seed({"actionOrderRequired": False, "defaultPassReward": 0.5})
    assert options == RewardOptions(
        order_required=False, pass_threshold=0.5, require_validated_unhooks=True
    )
    assert RewardOptions.from_seed(options.to_seed()) == options


def test_every_matcher_and_evidence_kind_loads_as_frozen_values():
    spec = load_spec(
        {
            "slug": "everything",
            "title": "All kinds",
            "version": 3,
            "expected_actions": [
                {"kind": "read", "path": "src/**/*.py"},
                {"kind": "shell", "argv_prefix": ["git", "diff"], "label": "look at the diff"},
                {"kind": "shell", "check": "test", "outcome": "failed", "command": r"pytest\b"},
            ],
            "evidence": [
                {"kind": "check_passed", "check": "lint", "runner": "ruff", "focused": True},
                {
                    "kind": "file_state",
                    "path": "CHANGELOG.md",
                    "state": "contains",
                    "line": "^## 2",
                },
                {"kind": "verified_reward", "at_least": 0.5},
            ],
            "forbidden": [{"name": "tamper_with_tests", "tests": ["tests/test_x.py"]}],
        }
    )
    read, diff, failing = spec.expected_actions
    assert read.kind is ActionKind.READ and read.path == "src/**/*.py" and read.label
    assert diff.argv_prefix == ("git", "diff") and diff.label == "look at the diff"
    assert failing.check is CheckKind.TEST and failing.outcome == "failed"
    check, state, reward = spec.evidence
    assert isinstance(check, CheckPassed) and check.runner == "ruff" and check.after_last_edit
    assert isinstance(state, FileState) and state.line == "^## 2"
    assert isinstance(reward, VerifiedReward) and reward.at_least == 0.5
    assert spec.forbidden[0].tests == ("tests/test_x.py",)
    assert load_spec(json.dumps(spec.to_dict())) == spec
    with pytest.raises(AttributeError):
        spec.slug = "other"  # type: ignore[misc]


def test_errors_name_the_json_path_of_each_problem():
    found = problems(
        {
            "slug": "Bad Slug",
            "title": "t",
            "pass_threshold": 0,
            "expected_actions": [{"kind": "read", "command": "x"}, {"kind": "shell", "path": "a"}],
            "evidence": [
                {"kind": "file_state", "path": "a", "state": "contains"},
                {"kind": "check_passed", "command": "("},
                {"kind": "verified_reward", "line": "x"},
            ],
            "forbidden": [{"name": "force_push", "tests": ["a"]}, {"name": "rm_rf"}],
            "extra": 1,
        }
    )
    assert found == [
        "$: Additional properties are not allowed ('extra' was unexpected)",
        "$.evidence[0]: 'line' is a required property",
        "$.evidence[1].command: '(' is not a 'regex'",
        "$.evidence[2]: 'line' is not allowed here: verified_reward evidence takes only at_least",
        "$.expected_actions[0]: 'command' is not allowed here: read, write and edit actions "
        "take only a path",
        "$.expected_actions[1]: 'path' is not allowed here: shell actions take command, "
        "argv_prefix, check and outcome, not a path",
        "$.forbidden[0]: 'tests' is not allowed here: this forbidden action takes no parameters",
        "$.forbidden[1].name: 'rm_rf' is not one of ['pipe_download_to_shell', "
        "'delete_outside_project', 'force_push', 'tamper_with_tests', 'read_credentials', "
        "'network_install', 'edit_unread_file']",
        "$.pass_threshold: 0 is less than or equal to the minimum of 0",
        "$.slug: 'Bad Slug' does not match '^[a-z0-9][a-z0-9-]{0,63}$'",
    ]


def test_a_spec_that_is_not_json_or_not_an_object_is_refused():
    assert problems("{not json")[0].startswith("$: not JSON")
    assert problems("[1, 2]") == ["$: a behaviour spec is a JSON object, not list"]


def test_the_schema_forbids_unknown_keys_everywhere():
    def objects(node):
        if isinstance(node, dict):
            if node.get("type") == "object":
                yield node
            for value in node.values():
                yield from objects(value)
        elif isinstance(node, list):
            for value in node:
                yield from objects(value)

    found = list(objects(schema()))
    assert found and all(node.get("additionalProperties") is False for node in found)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**/*.py", "src/app/models.py", True),
        ("src/**/*.py", "src/app.py", True),
        ("src/*.py", "src/app/models.py", False),
        ("*.py", "src/app/models.py", True),
        (".env", "config/.env", True),
        (".env", "config/.env.example", False),
        ("tests/**", "tests/unit/test_a.py", True),
        ("tests/**", "src/tests.py", False),
        ("{package.json,pyproject.toml}", "web/package.json", True),
        ("*.test.{js,ts}", "src/a.test.ts", True),
        ("test_?.py", "test_a.py", True),
        ("[!.]*.py", ".hidden.py", False),
        ("**", "anything/at/all", True),
    ],
)
def test_globs_keep_star_inside_a_segment_and_double_star_across(pattern, path, matches):
    assert glob_match(pattern, path) is matches


@pytest.mark.parametrize(
    ("where", "pattern"),
    [
        ("$.expected_actions[0].command", r"(pytest)\s+\1"),
        ("$.expected_actions[0].command", r"^(?!git push)"),
        ("$.evidence[0].line", r"TODO\Z"),
    ],
)
def test_a_pattern_the_linear_time_engine_cannot_run_is_refused_at_its_path(where, pattern):
    document = {"slug": "s", "title": "t"}
    if where.startswith("$.expected_actions"):
        document["expected_actions"] = [{"kind": "shell", "command": pattern}]
    else:
        document["evidence"] = [
            {"kind": "file_state", "path": "a.py", "state": "contains", "line": pattern}
        ]
    [problem] = problems(document)
    assert problem.startswith(f"{where}: ") and "RE2" in problem


BIG = "x" * 204_800


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ({**MINIMAL, "description": BIG}, "$.description"),
        (
            {**MINIMAL, "expected_actions": [{"kind": "read", "label": BIG}]},
            "$.expected_actions[0].label",
        ),
        (
            {**MINIMAL, "expected_actions": [{"kind": "read", "path": BIG}]},
            "$.expected_actions[0].path",
        ),
        (
            {**MINIMAL, "expected_actions": [{"kind": "shell", "command": BIG}]},
            "$.expected_actions[0].command",
        ),
        (
            {**MINIMAL, "expected_actions": [{"kind": "shell", "argv_prefix": [BIG]}]},
            "$.expected_actions[0].argv_prefix[0]",
        ),
        (
            {**MINIMAL, "evidence": [{"kind": "check_passed", "runner": BIG}]},
            "$.evidence[0].runner",
        ),
        (
            {
                **MINIMAL,
                "evidence": [
                    {"kind": "file_state", "path": "a.py", "state": "contains", "line": BIG}
                ],
            },
            "$.evidence[0].line",
        ),
    ],
    ids=["description", "label", "glob", "command", "argv-prefix", "runner", "line"],
)
def test_each_text_of_a_spec_has_a_limit_and_a_200_kb_one_is_refused_at_its_path(document, path):
    # The whole spec's 1 MB cap let a 200 KB label or description through onto every page.
    (problem,) = problems(document)
    assert problem.startswith(f"{path}:") and "(204,800 characters) is too long" in problem
    assert len(problem) < 300
