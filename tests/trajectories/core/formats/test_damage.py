"""Damaged logs keep every valid event: bad lines are warnings, and only paths that are files open.

A crash printing its stack trace between stream-json events, a session cut off mid-line, a
garbled byte or a value that is not an object costs the lines it touched, never the session;
a FIFO, a device or a broken link given to ingest is named and skipped, never opened.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from trajectories.core.formats import (
    IngestError,
    Loaded,
    NotTrajectory,
    detect,
    load,
    read_bytes,
    survey,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "formats"
CC_SESSION = FIXTURES / "claude-code-session.json"
PI_LINEAR = FIXTURES / "pi-linear.jsonl"
PI_TREE = FIXTURES / "pi-tree.jsonl"
CODEX = FIXTURES / "codex-rollout.jsonl"

SESSION = "5e55a0b1-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
STACK_TRACE = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3/dist-packages/hook.py", line 41, in <module>',
    "    at Object.<anonymous> (/usr/lib/node_modules/cli.js:12:7)",
    "Error: read ECONNRESET",
]


def stream_json() -> list[str]:
    """A `claude -p --output-format stream-json` stdout log, one event per line."""
    model = "claude-sonnet-4-5"
    events: list[dict[str, Any]] = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION,
            "model": model,
            "cwd": "/work/app",
            "tools": ["Bash"],
        },
        {"type": "user", "session_id": SESSION, "message": {"role": "user", "content": "Run it"}},
        {
            "type": "assistant",
            "session_id": SESSION,
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": model,
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
                ],
            },
        },
        {
            "type": "user",
            "session_id": SESSION,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "built"}],
            },
        },
        {
            "type": "assistant",
            "session_id": SESSION,
            "message": {
                "id": "m2",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": "It builds."}],
            },
        },
        {"type": "result", "subtype": "success", "session_id": SESSION, "total_cost_usd": 0.01},
    ]
    return [json.dumps(event) for event in events]


def write(where: Path, name: str, content: str | bytes) -> Path:
    path = where / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def loaded(path: Path) -> Loaded:
    result = load(path)
    assert isinstance(result, Loaded), result
    return result


def steps_of(path: Path) -> list[dict[str, Any]]:
    return loaded(path).atif["steps"]


# --------------------------------------------------------------------------- foreign lines


def test_a_stack_trace_between_stream_json_events_is_warned_about_and_every_event_kept(
    tmp_path: Path,
) -> None:
    rows = stream_json()
    clean = write(tmp_path, "clean.jsonl", "\n".join(rows) + "\n")
    damaged = rows[:3] + STACK_TRACE + rows[3:]
    result = loaded(write(tmp_path, "crashed.jsonl", "\n".join(damaged) + "\n"))

    assert result.format == "claude-code"
    assert [w.line for w in result.warnings] == [4, 5, 6, 7]
    assert all("is not valid JSON" in w.reason for w in result.warnings)
    assert not any("cut off" in w.reason for w in result.warnings)
    assert result.partial
    assert result.atif["steps"] == steps_of(clean)
    assert result.meta.steps == 3


def test_output_printed_before_the_first_event_does_not_make_the_log_plain_text(
    tmp_path: Path,
) -> None:
    rows = ["npm WARN config production Use `--omit=dev` instead.", *stream_json()]
    path = write(tmp_path, "warned.jsonl", "\n".join(rows) + "\n")
    assert detect(path) == "claude-code"
    result = loaded(path)
    assert [w.line for w in result.warnings] == [1]
    assert result.meta.session_id == SESSION


def test_text_with_a_json_line_that_is_no_log_stays_plain_text(tmp_path: Path) -> None:
    path = write(tmp_path, "notes.txt", 'Some notes\n{"a": 1}\nmore notes\n')
    assert load(path) == NotTrajectory("not a trajectory: plain text")


def test_values_that_are_not_objects_are_skipped_with_what_they_were(tmp_path: Path) -> None:
    rows = stream_json()
    damaged = [*rows[:2], "42", '"done"', "null", "true", *rows[2:]]
    result = loaded(write(tmp_path, "values.jsonl", "\n".join(damaged)))
    reasons = {w.line: w.reason for w in result.warnings}
    assert reasons == {
        3: "line 3 holds a number, not a JSON object",
        4: "line 4 holds a string, not a JSON object",
        5: "line 5 holds null, not a JSON object",
        6: "line 6 holds a boolean, not a JSON object",
    }
    assert result.meta.steps == 3


def test_a_line_python_would_read_but_json_does_not_is_kept_from_atif_make_too(
    tmp_path: Path,
) -> None:
    """atif-make's own reader accepts NaN; it converts the clean copy, so the ATIF has none."""
    rows = stream_json()
    rows[3] = rows[3].replace('"content": "built"', '"content": "built", "took": NaN')
    result = loaded(write(tmp_path, "nan.jsonl", "\n".join(rows)))
    [warning] = result.warnings
    assert warning.line == 4 and "NaN" in warning.reason
    json.dumps(result.atif, allow_nan=False)
    observations = [s.get("observation") for s in result.atif["steps"]]
    assert not any(o and "built" in json.dumps(o) for o in observations)


def test_many_bad_lines_each_get_their_own_warning(tmp_path: Path) -> None:
    rows = stream_json()
    damaged = [rows[0], *(f"garbage {n}" for n in range(300)), *rows[1:]]
    result = loaded(write(tmp_path, "noisy.jsonl", "\n".join(damaged)))
    assert [w.line for w in result.warnings] == list(range(2, 302))
    assert result.meta.steps == 3


# --------------------------------------------------------------------------- cut off, garbled


def test_a_session_cut_off_inside_a_multibyte_character_keeps_every_line_before_it(
    tmp_path: Path,
) -> None:
    rows = stream_json()
    rows[-2] = rows[-2].replace("It builds.", "It builds, café ready.")
    data = ("\n".join(rows[:-1])).encode()
    cut = data[: data.index("é".encode()) + 1]  # half of the two bytes of é
    result = loaded(write(tmp_path, "cut.jsonl", cut))
    [warning] = result.warnings
    assert warning.line == len(rows) - 1
    assert "cut off" in warning.reason
    assert result.meta.steps == 2


def test_a_garbled_byte_inside_a_string_is_replaced_and_the_event_kept(tmp_path: Path) -> None:
    rows = stream_json()
    data = "\n".join(rows).encode().replace(b"It builds.", b"It b\xffilds.")
    result = loaded(write(tmp_path, "garbled.jsonl", data))
    [warning] = result.warnings
    assert warning.line == 5 and "not UTF-8: byte 0xff" in warning.reason
    assert result.atif["steps"][-1]["message"] == "It b\ufffdilds."


def test_a_lone_surrogate_escape_is_replaced_so_the_text_can_be_stored(tmp_path: Path) -> None:
    rows = stream_json()
    rows[1] = rows[1].replace("Run it", "Run it \\ud800 now")
    result = loaded(write(tmp_path, "surrogate.jsonl", "\n".join(rows)))
    [warning] = result.warnings
    assert warning.line == 2 and "surrogate" in warning.reason
    assert result.atif["steps"][0]["message"] == "Run it \ufffd now"
    json.dumps(result.atif, ensure_ascii=False).encode("utf-8")


def test_an_escaped_surrogate_pair_is_text_and_no_warning(tmp_path: Path) -> None:
    rows = stream_json()
    rows[1] = rows[1].replace("Run it", "Run it \\ud83d\\ude00")
    result = loaded(write(tmp_path, "emoji.jsonl", "\n".join(rows)))
    assert result.warnings == ()
    assert result.atif["steps"][0]["message"] == "Run it \U0001f600"


def test_each_supported_log_keeps_its_events_around_a_foreign_line(tmp_path: Path) -> None:
    for seed in (CC_SESSION, PI_LINEAR, CODEX):
        rows = seed.read_text().splitlines()
        middle = len(rows) // 2
        damaged = [*rows[:middle], "Segmentation fault (core dumped)", *rows[middle:]]
        result = loaded(write(tmp_path, f"damaged-{seed.stem}.jsonl", "\n".join(damaged)))
        assert [w.line for w in result.warnings] == [middle + 1], seed.name
        assert result.atif["steps"] == loaded(seed).atif["steps"], seed.name


def test_a_pi_tree_whose_lost_line_held_a_parent_continues_with_the_entry_before_it(
    tmp_path: Path,
) -> None:
    rows = PI_TREE.read_text().splitlines()
    rows[4] = rows[4][:60]  # e0000004, the parent of e0000005, is lost
    result = loaded(write(tmp_path, "lost-parent.jsonl", "\n".join(rows)))
    lines = {w.line: w.reason for w in result.warnings}
    assert sorted(lines) == [5, 6]
    assert lines[6] == (
        "line 6 names parent 'e0000004', which is on no line read; "
        "the branch continues with the entry written before it, line 4"
    )
    messages = [step.get("message") for step in result.atif["steps"]]
    assert messages[0].startswith("make pipeline.py print")
    assert messages[-1] == "Done: the report prints."


def test_a_pi_tree_with_a_missing_parent_and_no_lost_line_is_still_an_error(
    tmp_path: Path,
) -> None:
    rows = PI_TREE.read_text().splitlines()
    del rows[4]  # gone without a trace: nothing says a line was lost
    with pytest.raises(IngestError, match="'e0000004', which is not in the file"):
        load(write(tmp_path, "dropped.jsonl", "\n".join(rows)))


# --------------------------------------------------------------------------- still failures


def test_a_file_with_no_line_that_decodes_is_still_an_ingest_error(tmp_path: Path) -> None:
    text = json.dumps({"schema_version": "ATIF-v1.7", "steps": []})
    with pytest.raises(IngestError) as caught:
        load(write(tmp_path, "cut.json", text[:-10]))
    assert caught.value.line == 1 and caught.value.reason


def test_a_broken_pretty_printed_document_has_no_lines_to_skip(tmp_path: Path) -> None:
    text = (FIXTURES / "atif-separate-results.json").read_text()
    with pytest.raises(IngestError, match="invalid JSON at line"):
        load(write(tmp_path, "cut.json", text[: len(text) // 2]))


def test_unknown_json_lines_with_a_bad_line_are_not_a_trajectory(tmp_path: Path) -> None:
    path = write(tmp_path, "metrics.jsonl", '{"loss": 0.5}\nnot json\n{"loss": 0.4}\n')
    result = load(path)
    assert isinstance(result, NotTrajectory)
    assert "match no supported agent log" in result.reason


# ------------------------------------------------------------------------ paths that are not files


def finishes(call: Any, seconds: float = 10) -> Any:
    """Run ``call`` in a thread; fail instead of hanging when it blocks (as a FIFO read would)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed back to the test
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_loading_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(IngestError, match="it is a FIFO"):
        finishes(lambda: load(fifo))
    with pytest.raises(IngestError, match="not a regular file"):
        finishes(lambda: read_bytes(fifo))


def test_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(IngestError, match="character device"):
        finishes(lambda: load(Path("/dev/zero")))


def test_survey_names_every_path_it_will_not_open_and_why(tmp_path: Path) -> None:
    good = write(tmp_path, "good.jsonl", PI_LINEAR.read_text())
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "broken.jsonl").symlink_to(tmp_path / "nowhere")
    (tmp_path / "null.jsonl").symlink_to("/dev/null")
    (tmp_path / "linked").symlink_to(FIXTURES, target_is_directory=True)
    (tmp_path / "alias.jsonl").symlink_to(good)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "agent.sock"))
        inputs = finishes(lambda: survey([tmp_path, Path("/dev/null")]))

    assert inputs.files == [tmp_path / "alias.jsonl", good]
    reasons = {skip.path.name: skip.reason for skip in inputs.skipped}
    assert reasons == {
        "agent.sock": "not a regular file: a socket",
        "broken.jsonl": "a broken symbolic link",
        "linked": "a symbolic link to a folder (not followed)",
        "null": "not a regular file: a character device",
        "null.jsonl": "not a regular file: a symbolic link to a character device",
        "pipe.jsonl": "not a regular file: a FIFO (named pipe)",
    }


def test_survey_skips_a_broken_link_given_directly_and_refuses_a_missing_path(
    tmp_path: Path,
) -> None:
    (tmp_path / "broken.jsonl").symlink_to(tmp_path / "nowhere")
    inputs = survey([tmp_path / "broken.jsonl"])
    assert inputs.files == [] and inputs.skipped[0].reason == "a broken symbolic link"
    with pytest.raises(FileNotFoundError):
        survey([tmp_path / "missing.jsonl"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists any folder")
def test_a_folder_that_cannot_be_listed_is_skipped_with_the_reason(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    closed.chmod(0)
    try:
        inputs = survey([tmp_path])
    finally:
        closed.chmod(0o755)
    assert inputs.skipped[0].path == closed
    assert inputs.skipped[0].reason.startswith("cannot list the folder")
