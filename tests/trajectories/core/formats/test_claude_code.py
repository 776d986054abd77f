"""Claude Code session logs (`claude_code.py`): valid ATIF, the raw tool results and cwd replay
needs, subagents, and a long session loaded in linear time."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.trajectories.core.formats.helpers import (
    CC_PARENT,
    CC_PARENT_ID,
    CC_SESSION,
    CC_SUBAGENT,
    calls,
    lines_of,
    loaded,
    results,
    steps,
    write,
)
from trajectories.core.formats import IngestError, load


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
