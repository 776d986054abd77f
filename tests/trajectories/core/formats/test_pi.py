"""pi session logs (`pi.py`): linear and tree layouts converted to ATIF-v1.7."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trajectories.core.formats.helpers import (
    PI_LINEAR,
    PI_TREE,
    calls,
    lines_of,
    loaded,
    results,
    steps,
    write,
)
from trajectories.core.formats import IngestError, load


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
