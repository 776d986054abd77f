"""Replay scripts on disk: exact round trips, and a script only ever serves the task it was
written for."""

from __future__ import annotations

import json

import pytest

from training.core.harbor.replay_script import (
    Action,
    ActionKind,
    ReplayScript,
    ScriptError,
    choose_script,
    read_script_text,
)


def script(task: str = "traj2env/repair-1", instruction: str = "Make the test pass.", **kw):
    actions = (
        Action(ActionKind.BASH, command="pytest", cwd="/app", event=3, tool="Bash"),
        Action(ActionKind.WRITE, path="/app/a.bin", data=b"\x00\xffbinary", event=4),
        Action(ActionKind.EDIT, path="/app/b.py", old="0", new="1", replace_all=True),
    )
    values = {
        "task": task,
        "key": "k",
        "instruction": instruction,
        "project_dir": "/app",
        "recorded_root": "/home/u/p",
        "source_sha256": "ab" * 32,
        "fix_at": 1,
        "actions": actions,
    }
    return ReplayScript(**(values | kw))


def test_a_script_reads_back_exactly_binary_content_included():
    written = script()
    assert read_script_text(written.to_json()) == written


def test_a_damaged_script_or_another_format_is_refused_in_a_sentence():
    with pytest.raises(ScriptError, match="not a replay script"):
        read_script_text(json.dumps({"format": "other"}))
    damaged = json.loads(script().to_json())
    damaged["actions"][0]["kind"] = "teleport"
    with pytest.raises(ScriptError, match="damaged"):
        read_script_text(json.dumps(damaged))
    beyond = json.loads(script().to_json()) | {"fix_at": 9}
    with pytest.raises(ScriptError, match="cuts at call 9 of 3"):
        read_script_text(json.dumps(beyond))


def test_a_script_serves_only_the_task_whose_instruction_harbor_gives(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(script().to_json())
    assert choose_script(path, "Make the test pass.\n\nExtra: be brief.").task == (
        "traj2env/repair-1"
    )
    with pytest.raises(ScriptError, match="not the script's"):
        choose_script(path, "Fix the parser.")


def test_a_folder_of_scripts_gives_each_task_its_own(tmp_path):
    (tmp_path / "a.json").write_text(script().to_json())
    (tmp_path / "b.json").write_text(script("traj2env/repair-2", "Fix the parser.").to_json())
    (tmp_path / "notes.json").write_text("{}")  # not a script: passed over in a folder
    assert choose_script(tmp_path, "Fix the parser.").task == "traj2env/repair-2"
    (tmp_path / "c.json").write_text(script("traj2env/repair-3", "Fix the parser.").to_json())
    with pytest.raises(ScriptError, match="2 replay scripts .* match this task"):
        choose_script(tmp_path, "Fix the parser.")
    with pytest.raises(ScriptError, match="neither a replay script nor a folder"):
        choose_script(tmp_path / "missing.json", "Fix the parser.")
