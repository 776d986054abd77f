"""Which format a file holds (`detect.py`): by its content, never by its name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trajectories.core.formats.helpers import (
    ATIF,
    ATIF_SEPARATE,
    CC_SESSION,
    CC_SUBAGENT,
    CODEX,
    FIXTURES,
    PI_LINEAR,
    PI_TREE,
    copy_to,
    loaded,
    write,
)
from trajectories.core.formats import NotTrajectory, detect, load


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
