"""Fixtures and small readers shared by the format layer's tests (tests/fixtures/formats)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from trajectories.core.formats import Loaded, load

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "formats"
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
