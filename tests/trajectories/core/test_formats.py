"""The ingest format layer on small synthetic logs (tests/fixtures/formats)."""

from __future__ import annotations

import json
import pickle
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from atif_make import convert

from trajectories.core.formats import (
    IngestError,
    Loaded,
    NotTrajectory,
    detect,
    discover,
    harbor_trial,
    load,
)
from trajectories.core.formats.converter import to_dict

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
CC_SESSION = FIXTURES / "claude-code-session.json"
CC_PARENT_ID = "aaaaaaaa-0000-4000-8000-000000000001"
CC_PARENT = FIXTURES / "cc-subagent" / f"{CC_PARENT_ID}.jsonl"
CC_SUBAGENT = FIXTURES / "cc-subagent" / CC_PARENT_ID / "subagents" / "agent-a1b2c3d.jsonl"
ATIF = FIXTURES / "atif-trajectory.jsonl"
ATIF_SEPARATE = FIXTURES / "atif-separate-results.json"
CODEX = FIXTURES / "codex-rollout.jsonl"
CODEX_EVENTS_ONLY = FIXTURES / "codex-events-only.jsonl"
PI_LINEAR = FIXTURES / "pi-linear.jsonl"
PI_TREE = FIXTURES / "pi-tree.jsonl"
TRIAL = FIXTURES / "harbor-trial" / "hello-world__AbC123"
TRIAL_ZERO = FIXTURES / "harbor-trial" / "hello-world__Zero00"


def loaded(path: Path, fmt: str = "auto") -> Loaded:
    result = load(path, fmt)
    assert isinstance(result, Loaded), result
    return result


def steps(result: Loaded) -> list[dict[str, Any]]:
    return result.atif["steps"]


def calls(result: Loaded) -> dict[str, dict[str, Any]]:
    return {c["tool_call_id"]: c for s in steps(result) for c in s.get("tool_calls") or ()}


def results(result: Loaded) -> dict[str | None, dict[str, Any]]:
    return {
        r.get("source_call_id"): r
        for s in steps(result)
        for r in (s.get("observation") or {}).get("results") or ()
    }


def copy_to(tmp_path: Path, source: Path, name: str | None = None) -> Path:
    target = tmp_path / (name or source.name)
    shutil.copyfile(source, target)
    return target


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    target = tmp_path / name
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")
    return target


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (CC_SESSION, "claude-code"),
        (CC_SUBAGENT, "claude-code"),
        (ATIF, "atif"),
        (ATIF_SEPARATE, "atif"),
        (CODEX, "codex"),
        (PI_LINEAR, "pi"),
        (PI_TREE, "pi"),
    ],
    ids=lambda value: value.name if isinstance(value, Path) else value,
)
def test_detect_goes_by_content(path: Path, fmt: str) -> None:
    assert detect(path) == fmt
    assert loaded(path).format == fmt


def test_a_claude_code_log_named_json_is_detected_as_claude_code() -> None:
    assert CC_SESSION.suffix == ".json"
    assert detect(CC_SESSION) == "claude-code"


def test_an_atif_file_named_jsonl_is_detected_as_atif(tmp_path: Path) -> None:
    assert ATIF.suffix == ".jsonl"
    renamed = copy_to(tmp_path, ATIF_SEPARATE, "trajectory.jsonl")
    assert detect(ATIF) == detect(renamed) == "atif"


def test_detect_finds_the_atif_version_at_the_top_of_a_document_larger_than_its_window(
    tmp_path: Path,
) -> None:
    document = json.loads(ATIF.read_text())
    document["steps"][0]["message"] = "x" * 2_000_000
    path = write(tmp_path, "big.json", json.dumps(document, indent=1))
    assert detect(path) == "atif"


def test_detect_does_not_take_a_document_that_only_mentions_atif_for_atif(tmp_path: Path) -> None:
    manifest = {"files": [{"path": "t.json", "schema_version": "ATIF-v1.7"}]}
    path = write(tmp_path, "manifest.json", json.dumps(manifest))
    assert detect(path) is None
    assert isinstance(load(path), NotTrajectory)


def test_detect_still_recognises_a_log_whose_last_line_is_cut_off(tmp_path: Path) -> None:
    text = CC_SESSION.read_text()
    path = write(tmp_path, "cut.jsonl", text[: len(text) - 40])
    assert detect(path) == "claude-code"
    result = loaded(path)
    [warning] = result.warnings
    assert warning.line == len(text[: len(text) - 40].splitlines())
    assert result.partial


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (FIXTURES / "not-trajectories").iterdir()),
    ids=lambda p: p.name,
)
def test_detect_returns_none_for_other_files(path: Path) -> None:
    assert detect(path) is None


def test_detect_answers_none_for_a_path_it_cannot_read(tmp_path: Path) -> None:
    assert detect(tmp_path / "gone.jsonl") is None
    assert detect(tmp_path) is None


def test_load_rejects_an_unknown_format_name() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        load(CC_SESSION, "cursor")


def test_load_with_the_right_explicit_format_works() -> None:
    assert loaded(PI_LINEAR, "pi").format == "pi"


def test_load_with_a_wrong_explicit_format_says_what_the_file_is() -> None:
    with pytest.raises(IngestError) as caught:
        load(CC_SESSION, "atif")
    assert "Claude Code" in caught.value.reason
    assert "'claude-code'" in caught.value.reason


# --------------------------------------------------------------------------- Claude Code


def test_claude_code_converts_to_valid_atif_17() -> None:
    result = loaded(CC_SESSION)
    assert result.atif["schema_version"] == "ATIF-v1.7"
    assert [s["source"] for s in steps(result)] == ["user"] + ["agent"] * 5
    assert set(calls(result)) == {"toolu_read", "toolu_test1", "toolu_edit", "toolu_test2"}
    assert results(result)["toolu_test1"]["extra"] == {"is_error": True}


def test_claude_code_keeps_the_raw_tool_use_result_of_every_call() -> None:
    raw = loaded(CC_SESSION).side_data["tool_results"]
    assert raw["toolu_read"]["file"]["content"] == "def add(a, b):\n    return a - b\n"
    assert raw["toolu_edit"]["originalFile"] == "def add(a, b):\n    return a - b\n"
    assert raw["toolu_edit"]["structuredPatch"][0]["lines"][-1] == "+    return a + b"
    assert raw["toolu_test1"].startswith("Error: Exit code 1")
    assert raw["toolu_test2"]["stdout"] == "1 passed"


def test_claude_code_keeps_the_cwd_each_call_was_made_in() -> None:
    cwd = loaded(CC_SESSION).side_data["cwd"]
    assert cwd["toolu_read"] == "/work/app"
    assert cwd["toolu_test2"] == "/work/app/tests"


def test_claude_code_meta() -> None:
    meta = loaded(CC_SESSION).meta
    assert meta.session_id == "11111111-2222-4333-8444-555555555555"
    assert (meta.agent_name, meta.agent_version) == ("claude-code", "2.1.0")
    assert meta.model_name == "claude-sonnet-4-5"
    assert meta.cwd == "/work/app"
    assert meta.started_at == "2026-03-01T10:00:01.000Z"
    assert meta.steps == 6
    assert meta.prompt_tokens == 5 * 1100 and meta.completion_tokens == 5 * 50
    assert meta.title == "Fix the failing test in calc.py"
    assert (meta.parent_session_id, meta.is_subagent) == (None, False)


def test_a_claude_code_subagent_log_names_the_session_that_spawned_it() -> None:
    meta = loaded(CC_SUBAGENT).meta
    assert meta.is_subagent
    assert meta.parent_session_id == CC_PARENT_ID
    assert meta.session_id == "agent-a1b2c3d"
    assert meta.title == "Search the repo for add()"


def test_a_claude_code_parent_drops_the_embedded_subagent_but_points_at_its_file() -> None:
    result = loaded(CC_PARENT)
    assert "subagent_trajectories" not in result.atif
    assert result.meta.steps == 3
    [entry] = result.side_data["subagents"]
    assert entry["path"] == f"{CC_PARENT_ID}/subagents/agent-a1b2c3d.jsonl"
    assert entry["tool_call_id"] == "toolu_task"
    [ref] = results(result)["toolu_task"]["subagent_trajectory_ref"]
    assert ref["trajectory_path"] == entry["path"]
    assert (CC_PARENT.parent / ref["trajectory_path"]).is_file()


def test_a_claude_code_log_with_a_byte_order_mark_loses_no_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bom.jsonl", b"\xef\xbb\xbf" + CC_SESSION.read_bytes())
    result = loaded(path)
    assert steps(result)[0]["message"] == "Fix the failing test in calc.py"
    assert result.meta.steps == 6


def test_a_claude_code_log_with_two_records_on_one_line_loses_neither(tmp_path: Path) -> None:
    rows = lines_of(CC_SESSION)
    rows[1:3] = [rows[1] + rows[2]]  # the user's request and the first reply share a line
    result = loaded(write(tmp_path, "crowded.jsonl", "\n".join(rows) + "\n"))
    assert steps(result)[0]["message"] == "Fix the failing test in calc.py"
    assert steps(result)[1]["message"] == "Let me read the file."
    assert str(tmp_path / "crowded.jsonl") in result.atif["notes"]


def test_a_claude_code_log_without_a_conversation_is_an_ingest_error(tmp_path: Path) -> None:
    rows = [line for line in lines_of(CC_SESSION) if '"file-history-snapshot"' in line]
    row = json.loads(lines_of(CC_SESSION)[1])
    row.update(type="mode", message=None)
    path = write(tmp_path, "empty.jsonl", "\n".join([*rows, json.dumps(row)]) + "\n")
    with pytest.raises(IngestError) as caught:
        load(path)
    assert "atif-make could not convert" in caught.value.reason


def test_a_line_that_is_not_an_object_is_skipped_with_a_warning_naming_it(tmp_path: Path) -> None:
    rows = lines_of(CC_SESSION)
    rows.insert(3, "[1, 2, 3]")
    result = loaded(write(tmp_path, "array-line.jsonl", "\n".join(rows)))
    [warning] = result.warnings
    assert warning.line == 4
    assert "not a JSON object" in warning.reason and "an array" in warning.reason
    assert steps(result) == steps(loaded(CC_SESSION))


# --------------------------------------------------------------------------- Codex


def test_codex_exit_status_comes_from_the_last_write_stdin_poll() -> None:
    side = loaded(CODEX).side_data
    command = side["commands"]["call_test"]
    assert command["exit_code"] == 1
    assert command["polls"] == ["call_poll"]
    assert command["output"] == "running 3 tests\n1 failing\n"
    assert side["polls"] == {"call_poll": "call_test"}


def test_codex_exec_command_end_gives_exit_code_cwd_and_full_output() -> None:
    side = loaded(CODEX).side_data
    command = side["commands"]["call_test2"]
    assert (command["exit_code"], command["cwd"], command["output"]) == (
        0,
        "/work/proj/pkg",
        "3 passing\n",
    )
    assert side["cwd"]["call_test2"] == "/work/proj/pkg"
    assert side["cwd"]["call_patch"] == "/work/proj"


def test_codex_apply_patch_keeps_the_patch_text_and_its_outcome() -> None:
    result = loaded(CODEX)
    assert calls(result)["call_patch"]["arguments"]["input"].startswith("*** Begin Patch")
    patch = result.side_data["patches"]["call_patch"]
    assert patch["success"] is True
    assert patch["changes"]["/work/proj/src/sum.js"]["type"] == "update"


def test_codex_commands_run_inside_a_code_mode_exec_are_tied_to_it() -> None:
    side = loaded(CODEX).side_data
    [nested] = side["nested_calls"]["call_exec"]
    command = side["commands"][nested]
    assert command["parent_call_id"] == "call_exec"
    assert (command["command"], command["argv"]) == (
        "npm run build",
        ["/bin/bash", "-lc", "npm run build"],
    )
    assert (command["exit_code"], command["output"]) == (0, "built\n")


def test_codex_meta() -> None:
    meta = loaded(CODEX).meta
    assert meta.session_id == "019c0000-1111-7222-8333-444455556666"
    assert (meta.agent_name, meta.agent_version, meta.model_name) == ("codex", "0.130.0", "gpt-5.5")
    assert meta.cwd == "/work/proj"
    assert (meta.prompt_tokens, meta.completion_tokens) == (9000, 300)
    assert meta.title == "make the tests pass"


def test_codex_user_messages_recorded_only_as_events_become_user_steps() -> None:
    result = loaded(CODEX_EVENTS_ONLY)
    sources = [s["source"] for s in steps(result)]
    assert sources == ["user", "agent", "agent", "user", "agent"]
    assert [s["step_id"] for s in steps(result)] == [1, 2, 3, 4, 5]
    assert steps(result)[3]["message"] == "thanks"
    assert steps(result)[3]["extra"] == {"inserted_from": "event_msg/user_message"}
    assert result.side_data["normalised"]
    assert result.meta.title == "summarise notes.txt"


def test_codex_user_messages_already_in_the_response_items_are_not_repeated() -> None:
    result = loaded(CODEX)
    said = [s["message"] for s in steps(result) if s["source"] == "user"]
    assert said.count("make the tests pass") == 1
    assert not any("inserted" in note for note in result.side_data["normalised"])


def test_codex_session_id_is_the_rollout_id_not_the_file_name() -> None:
    result = loaded(CODEX)
    assert (
        result.atif["session_id"]
        == result.meta.session_id
        == "019c0000-1111-7222-8333-444455556666"
    )
    assert result.side_data["normalised"] == [
        "session_id set from session_meta.id instead of the file name"
    ]


# --------------------------------------------------------------------------- pi


def test_pi_linear_session_converts_to_atif_17() -> None:
    result = loaded(PI_LINEAR)
    atif = result.atif
    assert atif["schema_version"] == "ATIF-v1.7"
    assert atif["agent"]["name"] == "pi"
    first = steps(result)[1]
    assert first["message"] == "Running the checks."
    assert first["reasoning_content"] == "I should run npm run check."
    assert first["tool_calls"][0]["arguments"] == {"command": "npm run check"}
    assert first["metrics"] == {
        "prompt_tokens": 115,
        "completion_tokens": 20,
        "cached_tokens": 100,
        "cost_usd": 0.00038,
        "extra": {"cache_write_tokens": 5},
    }
    assert results(result)["tc_check1"]["extra"] == {"is_error": True}
    assert results(result)["tc_check2"]["extra"] == {"is_error": False}
    assert "Command exited with code 2" in results(result)["tc_check1"]["content"]


def test_pi_model_and_thinking_changes_apply_to_later_steps() -> None:
    agent_steps = [s for s in steps(loaded(PI_LINEAR)) if s["source"] == "agent"]
    assert [s["model_name"] for s in agent_steps] == [
        "claude-opus-4-5",
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "claude-sonnet-4-5",
        "claude-sonnet-4-5",
    ]
    assert [s.get("reasoning_effort") for s in agent_steps] == [None, None, "high", "high", "high"]


def test_pi_two_objects_on_one_line_are_both_recovered() -> None:
    assert PI_LINEAR.read_text().count("\n") == 14  # 15 entries, the last two on one line
    said = [s["message"] for s in steps(loaded(PI_LINEAR))]
    assert said[-2:] == ["thanks, commit it", "Committed."]


def test_pi_a_command_the_user_ran_becomes_a_user_step_with_its_output() -> None:
    [shell] = [s for s in steps(loaded(PI_LINEAR)) if "user_shell" in (s.get("extra") or {})]
    assert shell["source"] == "user"
    assert shell["message"] == "!git status --short"
    assert shell["extra"]["user_shell"]["exit_code"] == 0
    assert shell["observation"]["results"][0]["content"] == " M src/a.ts\n"


def test_pi_compaction_becomes_a_system_step_with_the_summary() -> None:
    [compaction] = [s for s in steps(loaded(PI_LINEAR)) if "compaction" in (s.get("extra") or {})]
    assert compaction["source"] == "system"
    assert compaction["message"] == "Fixed a type error in src/a.ts; checks pass."
    assert compaction["extra"]["compaction"]["tokens_before"] == 120000


def test_pi_tool_result_details_are_kept_for_replay() -> None:
    assert loaded(PI_LINEAR).side_data["tool_results"]["tc_edit"]["diff"].startswith("-1 let x")
    tree = loaded(PI_TREE).side_data
    assert tree["tool_results"]["tool_exec"]["exitCode"] == 0
    assert tree["cwd"] == {"tool_exec": "/workspace"}


def test_pi_meta() -> None:
    meta = loaded(PI_LINEAR).meta
    assert meta.session_id == "pi-linear-0001"
    assert meta.cwd == "/home/me/proj"
    assert meta.started_at == "2026-01-05T12:00:00.000Z"
    assert meta.model_name == "claude-opus-4-5"
    assert meta.prompt_tokens == 5 * 115 and meta.completion_tokens == 5 * 20
    assert meta.cost_usd == pytest.approx(5 * 0.00038)
    assert meta.title == "run the checks and fix what fails"


def test_pi_tree_follows_the_active_branch() -> None:
    result = loaded(PI_TREE)
    assert set(calls(result)) == {"tool_read", "tool_exec"}  # tool_bad was on the abandoned branch
    assert result.side_data["pi_tree"] == {"leaf_id": "e0000011", "on_branch": 9, "off_branch": 2}
    summary = [s for s in steps(result) if "branch_summary" in (s.get("extra") or {})]
    assert summary[0]["message"] == "Tried writing a stub that exits; abandoned."


def test_pi_tree_active_branch_is_the_one_written_last(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in lines_of(PI_TREE)]
    # Return to the first attempt: a new entry under e0000007 becomes the last leaf.
    rows.append(
        {
            "type": "message",
            "id": "e0000012",
            "parentId": "e0000007",
            "timestamp": "2026-06-04T13:22:00.000Z",
            "message": {"role": "user", "content": "go back to the stub", "timestamp": 1},
        }
    )
    result = loaded(write(tmp_path, "tree.jsonl", "\n".join(json.dumps(r) for r in rows)))
    assert set(calls(result)) == {"tool_read", "tool_bad"}
    assert steps(result)[-1]["message"] == "go back to the stub"


def test_pi_tree_entry_with_a_missing_parent_is_an_ingest_error(tmp_path: Path) -> None:
    rows = lines_of(PI_TREE)
    rows[-1] = rows[-1].replace('"parentId": "e0000010"', '"parentId": "nowhere"')
    with pytest.raises(IngestError) as caught:
        load(write(tmp_path, "broken-tree.jsonl", "\n".join(rows)))
    assert "'nowhere'" in caught.value.reason
    assert caught.value.line == len(rows)


def test_pi_tree_with_a_parent_cycle_is_an_ingest_error(tmp_path: Path) -> None:
    rows = lines_of(PI_TREE)
    rows[3] = rows[3].replace('"parentId": "e0000002"', '"parentId": "e0000011"')
    with pytest.raises(IngestError, match="cycle"):
        load(write(tmp_path, "cycle.jsonl", "\n".join(rows)))


# --------------------------------------------------------------------------- ATIF


def test_atif_is_accepted_as_written() -> None:
    result = loaded(ATIF)
    assert result.atif == json.loads(ATIF.read_text())
    assert result.side_data == {}
    assert result.meta.cost_usd == pytest.approx(0.003)
    assert result.meta.cwd == "/app"


def test_atif_results_in_separate_steps_are_moved_to_the_calling_step() -> None:
    result = loaded(ATIF_SEPARATE)
    by_id = {s["step_id"]: s for s in steps(result)}
    assert by_id[2]["observation"]["results"][0]["content"] == "a.txt\nb.txt"
    assert "observation" not in by_id[3]
    dangling = by_id[4]["observation"]["results"][0]
    assert dangling["source_call_id"] is None
    assert dangling["extra"]["unresolved_source_call_id"] == "call_never_made"
    assert len(result.side_data["normalised"]) == 2


def test_atif_with_an_unsupported_schema_version_is_an_ingest_error(tmp_path: Path) -> None:
    document = json.loads(ATIF.read_text()) | {"schema_version": "ATIF-v9.0"}
    with pytest.raises(IngestError, match="unsupported ATIF schema version 'ATIF-v9.0'"):
        load(write(tmp_path, "future.json", json.dumps(document)))


def test_atif_schema_violation_names_the_field(tmp_path: Path) -> None:
    document = json.loads(ATIF.read_text())
    document["steps"][1]["source"] = "robot"
    with pytest.raises(IngestError) as caught:
        load(write(tmp_path, "bad-source.json", json.dumps(document)))
    assert "steps[1].source" in caught.value.reason


def test_atif_without_steps_is_an_ingest_error(tmp_path: Path) -> None:
    document = json.loads(ATIF.read_text()) | {"steps": []}
    with pytest.raises(IngestError, match="no steps"):
        load(write(tmp_path, "empty-steps.json", json.dumps(document)))


def test_two_atif_documents_in_one_file_are_an_ingest_error(tmp_path: Path) -> None:
    text = ATIF.read_text()
    with pytest.raises(IngestError) as caught:
        load(write(tmp_path, "two.jsonl", text + text))
    assert caught.value.line == 2


# --------------------------------------------------------------------------- Harbor trials


def test_harbor_trial_task_and_reward_come_from_result_json() -> None:
    trial = harbor_trial(TRIAL / "agent" / "trajectory.json")
    assert trial is not None
    assert (trial.task, trial.trial, trial.reward) == ("hello-world", "hello-world__AbC123", 1.0)
    assert trial.root == TRIAL


def test_harbor_trial_reward_falls_back_to_reward_json_and_keeps_zero() -> None:
    trial = harbor_trial(TRIAL_ZERO / "agent" / "sessions" / "session.jsonl")
    assert trial is not None
    assert trial.reward == 0.0


def test_no_harbor_trial_outside_a_trial_folder() -> None:
    assert harbor_trial(CC_SESSION) is None


def test_trajectories_in_a_trial_folder_carry_task_and_reward() -> None:
    meta = loaded(TRIAL / "agent" / "trajectory.json").meta
    assert (meta.harbor_task, meta.harbor_reward) == ("hello-world", 1.0)
    meta = loaded(TRIAL_ZERO / "agent" / "sessions" / "session.jsonl").meta
    assert (meta.harbor_task, meta.harbor_reward) == ("hello-world", 0.0)


# --------------------------------------------------------------------------- not trajectories


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (TRIAL / "result.json", "Harbor trial result.json"),
        (TRIAL / "verifier" / "reward.txt", "a single number"),
        (TRIAL / "verifier" / "test-stdout.txt", "plain text"),
        (TRIAL_ZERO / "verifier" / "reward.json", "flat map of numbers"),
        (FIXTURES / "not-trajectories" / "README.md", "markdown"),
        (FIXTURES / "not-trajectories" / "prompt.txt", "plain text"),
        (FIXTURES / "not-trajectories" / "swe-agent.traj", "SWE-agent .traj (unsupported format)"),
        (FIXTURES / "not-trajectories" / "manifest.jsonl", "JSON Lines that match no"),
        (FIXTURES / "not-trajectories" / "array.json", "JSON array"),
        (FIXTURES / "not-trajectories" / "image.png", "binary file"),
    ],
    ids=lambda value: value.name if isinstance(value, Path) else None,
)
def test_other_files_are_not_trajectories_and_say_why(path: Path, reason: str) -> None:
    result = load(path)
    assert isinstance(result, NotTrajectory)
    assert result.reason.startswith("not a trajectory: ")
    assert reason in result.reason


def test_a_file_that_is_not_a_trajectory_stays_one_whatever_format_is_asked_for() -> None:
    assert isinstance(load(TRIAL / "result.json", "atif"), NotTrajectory)


# --------------------------------------------------------------------------- bad files


@pytest.mark.parametrize("content", ["", "\n\n  \n"], ids=["empty", "blank"])
def test_an_empty_file_is_an_ingest_error(tmp_path: Path, content: str) -> None:
    with pytest.raises(IngestError) as caught:
        load(write(tmp_path, "empty.jsonl", content))
    assert caught.value.reason in ("the file is empty", "the file holds only blank space")


def test_invalid_json_in_a_document_reports_its_line(tmp_path: Path) -> None:
    text = ATIF_SEPARATE.read_text().replace('"List the files"', '"List the files",,', 1)
    with pytest.raises(IngestError) as caught:
        load(write(tmp_path, "broken.json", text))
    expected = next(n for n, line in enumerate(text.splitlines(), 1) if ",," in line)
    assert caught.value.line == expected
    assert caught.value.reason.startswith(f"invalid JSON at line {expected}, column ")


def test_a_truncated_last_line_is_a_warning_with_its_number_that_says_cut_off(
    tmp_path: Path,
) -> None:
    rows = lines_of(CODEX)
    rows[-1] = rows[-1][:50]
    result = loaded(write(tmp_path, "cut.jsonl", "\n".join(rows)))
    [warning] = result.warnings
    assert warning.line == len(rows)
    assert "cut off" in warning.reason
    assert result.partial and result.meta.steps >= 1


def test_a_bad_line_in_the_middle_is_a_warning_and_every_other_line_is_kept(
    tmp_path: Path,
) -> None:
    rows = lines_of(PI_LINEAR)
    rows[4] = rows[4][:-3]
    result = loaded(write(tmp_path, "middle.jsonl", "\n".join(rows)))
    [warning] = result.warnings
    assert warning.line == 5
    assert "line 5 is not valid JSON" in warning.reason
    assert "cut off" not in warning.reason
    without = "\n".join(rows[:4] + rows[5:])
    assert steps(result) == steps(loaded(write(tmp_path, "without.jsonl", without)))


def test_bytes_that_are_not_utf8_are_replaced_and_their_line_reported(tmp_path: Path) -> None:
    data = PI_LINEAR.read_text().replace("run the checks", "run the ch\u00e9cks").encode("latin-1")
    result = loaded(write(tmp_path, "latin1.jsonl", data))
    [warning] = result.warnings
    assert warning.line == 2
    assert "not UTF-8" in warning.reason and "0xe9" in warning.reason
    assert any("run the ch\ufffdcks" in str(step.get("message")) for step in steps(result))
    assert result.partial


def test_a_utf16_file_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="UTF-16"):
        load(write(tmp_path, "utf16.json", ATIF.read_text().encode("utf-16")))


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e999"])
def test_numbers_json_cannot_store_are_rejected(tmp_path: Path, number: str) -> None:
    text = ATIF.read_text().replace('"cost_usd": 0.002', f'"cost_usd": {number}')
    with pytest.raises(IngestError, match="line 1"):
        load(write(tmp_path, "nan.json", text))


def test_a_missing_file_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="cannot read"):
        load(tmp_path / "gone.jsonl")


def test_a_folder_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="cannot read"):
        load(tmp_path)


def test_ingest_error_survives_pickling_for_workers() -> None:
    error = IngestError(Path("/x/y.jsonl"), "line 3 is not valid JSON", 3)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.path, copy.line, copy.reason, str(copy)) == (
        error.path,
        3,
        error.reason,
        "/x/y.jsonl:3: line 3 is not valid JSON",
    )


@pytest.mark.parametrize(
    "path",
    [CC_SESSION, CC_PARENT, ATIF, ATIF_SEPARATE, CODEX, CODEX_EVENTS_ONLY, PI_LINEAR, PI_TREE],
    ids=lambda p: p.name,
)
def test_everything_loaded_is_json_safe(path: Path) -> None:
    result = loaded(path)
    json.dumps(result.atif, allow_nan=False)
    json.dumps(result.side_data, allow_nan=False)


# --------------------------------------------------------------------------- discover


def test_discover_walks_folders_sorted_and_skips_hidden(tmp_path: Path) -> None:
    (tmp_path / "b" / ".git").mkdir(parents=True)
    (tmp_path / "a").mkdir()
    for name in ("b/2.jsonl", "b/.git/config", "a/1.json", "a/.hidden.jsonl", "c.txt"):
        (tmp_path / name).write_text("{}")
    assert discover([tmp_path]) == [
        tmp_path / "a/1.json",
        tmp_path / "b/2.jsonl",
        tmp_path / "c.txt",
    ]


def test_discover_passes_over_harbor_task_folders(tmp_path: Path) -> None:
    task = tmp_path / "sandbox" / "deploy"
    (task / "tests").mkdir(parents=True)
    for name in ("session.jsonl", "sandbox/deploy/task.toml", "sandbox/deploy/tests/test.sh"):
        (tmp_path / name).write_text("{}")
    assert discover([tmp_path]) == [tmp_path / "session.jsonl"]


def test_discover_lists_each_file_once_however_it_was_reached(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text("{}")
    assert discover([tmp_path / "x.jsonl", tmp_path, tmp_path / "x.jsonl"]) == [
        tmp_path / "x.jsonl"
    ]


def test_discover_refuses_a_path_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        discover([tmp_path / "nope"])


# --------------------------------------------------------------------------- performance


def _claude_code_session(path: Path, count: int) -> Path:
    """A Claude Code log of ``count`` Read/Edit/Bash rounds, shaped like the real thing."""
    base = json.loads(lines_of(CC_SESSION)[1])
    original = "\n".join(f"line {i} = {i}" for i in range(40))
    out = [json.dumps(base)]
    for i in range(count):
        call = f"toolu_{i:06d}"
        use = {"type": "tool_use", "id": call, "name": "Edit", "input": {"file_path": "/w/a.py"}}
        reply = base | {
            "type": "assistant",
            "uuid": f"a{i}",
            "message": {"id": f"m{i}", "role": "assistant", "model": "m", "content": [use]},
        }
        outcome = base | {
            "uuid": f"r{i}",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}],
            },
            "toolUseResult": {"filePath": "/w/a.py", "originalFile": original},
        }
        out += [json.dumps(reply), json.dumps(outcome)]
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize(
    "path", [CC_SESSION, CC_PARENT, CODEX, CODEX_EVENTS_ONLY], ids=lambda p: p.name
)
def test_the_linear_serialiser_writes_what_atif_make_writes(path: Path) -> None:
    trajectory, _ = convert(path)
    assert to_dict(trajectory) == trajectory.to_dict()


def test_deeply_nested_tool_arguments_do_not_blow_up_serialisation(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in lines_of(CC_SESSION)]
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(40):  # atif-make's own to_dict would make 2**40 calls here
        node["k"] = {}
        node = node["k"]
    rows[3]["message"]["content"][0]["input"]["deep"] = deep
    start = time.perf_counter()
    result = loaded(write(tmp_path, "deep.jsonl", "\n".join(json.dumps(r) for r in rows)))
    assert time.perf_counter() - start < 5
    assert "deep" in calls(result)["toolu_read"]["arguments"]


@pytest.mark.slow
def test_a_long_claude_code_session_loads_in_linear_time(tmp_path: Path) -> None:
    best = {}
    for count in (1_000, 8_000):
        path = _claude_code_session(tmp_path / f"s{count}.jsonl", count)
        timings = []
        for _ in range(2):
            start = time.perf_counter()
            result = loaded(path)
            timings.append(time.perf_counter() - start)
        best[count] = min(timings)
        assert result.meta.steps == count + 1
        assert len(result.side_data["tool_results"]) == count
    # Eight times the steps: about eight times the time if linear, sixty-four if quadratic.
    assert best[8_000] < 20 * best[1_000], best
