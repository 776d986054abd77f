"""How the separate verifier reads a reward (Harbor's way), and the tampering controls a task
graded by its own tests/test.sh must score 0 against. No Docker here."""

from __future__ import annotations

import pytest

from groundwork.core.docker import FileEntry
from tasks_review.core.trials.controls import CATALOGUE as MINED
from tests.training.core.authored.helpers import EXAMPLE
from training.core.authored import CATALOGUE, read_authored_task, read_rewards
from training.core.authored.matrix import skip_reason


def copied(**files: str) -> dict[str, FileEntry]:
    return {name.replace("_", "."): FileEntry(text.encode()) for name, text in files.items()}


def test_reward_txt_is_one_number():
    assert read_rewards(copied(reward_txt="1\n")) == ({"reward": 1.0}, None)
    assert read_rewards(copied(reward_txt="0.25")) == ({"reward": 0.25}, None)


def test_reward_json_wins_over_reward_txt_as_harbor_reads_it_first():
    rewards, problem = read_rewards(copied(reward_txt="0", reward_json='{"reward": 1, "x": 0.5}'))
    assert (rewards, problem) == ({"reward": 1.0, "x": 0.5}, None)


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ({}, "tests/test.sh wrote no reward"),
        ({"reward_txt": "passed"}, "reward.txt is not a number"),
        ({"reward_txt": "nan"}, "reward.txt is not finite"),
        ({"reward_json": "{"}, "reward.json is not JSON"),
        ({"reward_json": '{"reward": "1"}'}, "reward.json is not a flat object of finite numbers"),
        ({"reward_json": '{"reward": true}'}, "reward.json is not a flat object of finite numbers"),
        ({"reward_json": '{"score": 1}'}, "reward.json has no 'reward' (it has score)"),
    ],
    ids=["none", "words", "nan", "broken-json", "string", "bool", "other-key"],
)
def test_no_usable_reward_is_no_reward_with_the_reason(files, why):
    rewards, problem = read_rewards(copied(**files))
    assert rewards == {} and problem is not None and problem.startswith(why)


def test_the_catalogue_covers_each_way_such_a_task_can_trust_the_agent():
    assert [c.name for c in CATALOGUE] == [
        "forge_reward_files",
        "symlinks_out_of_project",
        "fake_interpreter_in_project",
        "fake_runner_on_path",
        "python_startup_hooks_in_project",
        "forge_read_files",
        "delete_read_files",
        "background_reward_writer",
    ]


def test_a_mined_control_that_applies_unchanged_is_reused_not_copied():
    reused = next(c for c in CATALOGUE if c.name == "fake_runner_on_path")
    assert any(reused is mined for mined in MINED)


def test_every_control_applies_to_the_example():
    spec = read_authored_task(EXAMPLE)
    assert {c.name: skip_reason(c, spec) for c in CATALOGUE} == {c.name: None for c in CATALOGUE}


def test_controls_on_the_files_the_tests_read_skip_a_task_whose_tests_name_none():
    spec = read_authored_task(EXAMPLE)
    blind = type(spec)(**{**{f: getattr(spec, f) for f in spec.__slots__}, "named": ()})
    skipped = {c.name: skip_reason(c, blind) for c in CATALOGUE if skip_reason(c, blind)}
    assert skipped == {
        "forge_read_files": "the tests name no file inside /app for it to work on",
        "delete_read_files": "the tests name no file inside /app for it to work on",
    }
