"""The grader's entry point (kit/grade.py): the reward files Harbor reads, written so that
nothing the agent planted in the verifier's folder can stand in for them."""

from __future__ import annotations

import json
import os

import pytest

from .helpers import load

grade = load("grade")


def rewards(verifier) -> tuple[str, dict]:
    return (verifier / "reward.txt").read_text(), json.loads((verifier / "reward.json").read_text())


def test_both_reward_files_are_written_harbor_reads_reward_json_first(tmp_path):
    grade.write_reward(str(tmp_path), 0.5)
    assert rewards(tmp_path) == ("0.5\n", {"reward": 0.5})
    grade.write_reward(str(tmp_path), 1.0)
    assert rewards(tmp_path) == ("1\n", {"reward": 1.0})


@pytest.mark.parametrize("name", ["reward.txt", "reward.json"])
def test_a_link_planted_at_a_reward_file_is_replaced_not_written_through(tmp_path, name):
    # The agent's own file says 1; the grader's write must neither land there nor leave it
    # readable through the link when the write goes wrong.
    theirs = tmp_path / "agent-owned"
    theirs.write_text("1\n")
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    (verifier / name).symlink_to(theirs)

    grade.write_reward(str(verifier), 0.0)

    assert not (verifier / name).is_symlink()
    assert rewards(verifier) == ("0\n", {"reward": 0.0})
    assert theirs.read_text() == "1\n"


def test_a_link_to_a_file_that_refuses_writes_leaves_no_1_behind(tmp_path):
    # /dev/full: every write through the link fails, and reading the link gives no reward.
    (tmp_path / "reward.txt").symlink_to("/dev/full")
    (tmp_path / "reward.json").write_text('{"reward": 1.0}')
    grade.write_reward(str(tmp_path), 0.0)
    assert rewards(tmp_path) == ("0\n", {"reward": 0.0})


def test_a_folder_or_a_fifo_at_a_reward_file_is_replaced(tmp_path):
    (tmp_path / "reward.txt").mkdir()
    (tmp_path / "reward.txt" / "x").write_text("1")
    os.mkfifo(tmp_path / "reward.json")
    grade.write_reward(str(tmp_path), 0.0)
    assert rewards(tmp_path) == ("0\n", {"reward": 0.0})


def test_a_reward_file_changed_after_it_was_written_is_caught_when_read_back(tmp_path, monkeypatch):
    # A process still running (same-container grading) rewrites reward.json between the
    # grader's write and Harbor's read: the read-back fails the grading loudly.
    real_write = grade._write_new

    def raced(folder, name, data):
        real_write(folder, name, data)
        if name == "reward.json":
            with open(os.path.join(folder, name), "w") as handle:
                handle.write('{"reward": 1.0}')

    monkeypatch.setattr(grade, "_write_new", raced)
    with pytest.raises(grade.RewardNotWritten):
        grade.write_reward(str(tmp_path), 0.0)


def test_the_grader_writes_both_reward_files_last_over_whatever_was_planted(tmp_path, monkeypatch):
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    (verifier / "reward.json").write_text('{"reward": 1.0}')
    (verifier / "reward.txt").symlink_to(tmp_path / "nowhere")
    config = tmp_path / "grading.json"
    config.write_text("{}")
    monkeypatch.setenv("TRAJ2ENV_VERIFIER_DIR", str(verifier))
    monkeypatch.setattr("sys.argv", ["grade.py", str(config)])

    grade.main(lambda config, verifier, out: {"reward": 0.0, "reasons": ["nothing passed"]})

    assert rewards(verifier) == ("0\n", {"reward": 0.0})
    verdict = json.loads((verifier / "traj2env" / "verdict.json").read_text())
    assert verdict["reward"] == 0.0
