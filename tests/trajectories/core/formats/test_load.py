"""The format layer's entry points (`formats/__init__.py`): `load` with an explicit format,
everything loaded is JSON-safe, and `discover` walking folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trajectories.core.formats.helpers import (
    ATIF,
    ATIF_SEPARATE,
    CC_PARENT,
    CC_SESSION,
    CODEX,
    CODEX_EVENTS_ONLY,
    PI_LINEAR,
    PI_TREE,
    loaded,
)
from trajectories.core.formats import IngestError, discover, load


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


@pytest.mark.parametrize(
    "path",
    [CC_SESSION, CC_PARENT, ATIF, ATIF_SEPARATE, CODEX, CODEX_EVENTS_ONLY, PI_LINEAR, PI_TREE],
    ids=lambda p: p.name,
)
def test_everything_loaded_is_json_safe(path: Path) -> None:
    result = loaded(path)
    json.dumps(result.atif, allow_nan=False)
    json.dumps(result.side_data, allow_nan=False)


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
    task = tmp_path / "authored" / "deploy"
    (task / "tests").mkdir(parents=True)
    for name in ("session.jsonl", "authored/deploy/task.toml", "authored/deploy/tests/test.sh"):
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
