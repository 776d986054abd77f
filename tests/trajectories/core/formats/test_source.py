"""Reading a file (`source.py`): what is not a trajectory says why, and bad files are an IngestError
or a warning naming their line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trajectories.core.formats.helpers import (
    ATIF,
    ATIF_SEPARATE,
    CC_SESSION,
    CODEX,
    FIXTURES,
    PI_LINEAR,
    TRIAL,
    TRIAL_ZERO,
    lines_of,
    loaded,
    steps,
    write,
)
from trajectories.core.formats import IngestError, NotTrajectory, load


def test_a_line_that_is_not_an_object_is_skipped_with_a_warning_naming_it(tmp_path: Path) -> None:
    rows = lines_of(CC_SESSION)
    rows.insert(3, "[1, 2, 3]")
    result = loaded(write(tmp_path, "array-line.jsonl", "\n".join(rows)))
    [warning] = result.warnings
    assert warning.line == 4
    assert "not a JSON object" in warning.reason and "an array" in warning.reason
    assert steps(result) == steps(loaded(CC_SESSION))


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
