"""ATIF input (`atif.py`): accepted as written, results in separate steps moved to the calling
step, bad documents refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trajectories.core.formats.helpers import ATIF, ATIF_SEPARATE, loaded, steps, write
from trajectories.core.formats import IngestError, load


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
