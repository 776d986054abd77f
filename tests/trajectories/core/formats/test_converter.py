"""Serialising atif-make's output (`converter.py`): what atif-make writes, without its recursion."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from atif_make import convert

from tests.trajectories.core.formats.helpers import (
    CC_PARENT,
    CC_SESSION,
    CODEX,
    CODEX_EVENTS_ONLY,
    calls,
    lines_of,
    loaded,
    write,
)
from trajectories.core.formats.converter import to_dict


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
