"""Rows for view and selector tests, without going through ingest."""

from __future__ import annotations

import itertools
import json

from trajectories.models import SourceFile, Step, Trajectory
from trajectories.store import blob_put, sha256_hex

_seq = itertools.count(1)


def make_trajectory(*, steps: list[dict] | None = None, **fields) -> Trajectory:
    n = next(_seq)
    raw = f"synthetic trajectory {n} {fields}".encode()
    source = SourceFile.objects.create(
        sha256=sha256_hex(raw), path=f"/data/session-{n}.jsonl", size=len(raw), raw=blob_put(raw)
    )
    steps = steps if steps is not None else [{"step_id": 1, "source": "user", "message": "hello"}]
    atif = {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "claude-code", "version": "1"},
        "steps": steps,
    }
    defaults = dict(
        format="claude-code",
        schema_version="ATIF-v1.7",
        agent_name="claude-code",
        model_name="claude-sonnet-4-5",
        session_id=f"session-{n}",
        title=f"Fix the failing test number {n}",
        steps_count=len(steps),
        prompt_tokens=1000,
        completion_tokens=200,
        cost_usd=0.05,
    )
    defaults.update(fields)
    trajectory = Trajectory.objects.create(
        source=source, atif=blob_put(json.dumps(atif).encode()), **defaults
    )
    Step.objects.bulk_create(
        Step(
            trajectory=trajectory,
            index=i,
            step_id=s.get("step_id", i + 1),
            source=s.get("source", "agent"),
            message=s.get("message", ""),
            tool_calls=s.get("tool_calls", []),
            observations=(s.get("observation") or {}).get("results", []),
            timestamp=s.get("timestamp", ""),
        )
        for i, s in enumerate(steps)
    )
    return trajectory
