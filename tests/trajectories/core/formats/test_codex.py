"""Codex rollouts (`codex.py`): commands' exit status, output and cwd, patches, user messages and
the session id."""

from __future__ import annotations

from tests.trajectories.core.formats.helpers import CODEX, CODEX_EVENTS_ONLY, calls, loaded, steps


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
