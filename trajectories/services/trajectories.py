"""Storing one trajectory: its blobs, its source file, its row and one row per step.

The shared conversions of what a format gives to what a row holds (`path_text`, `message_text`,
`parse_when`) live here too: ingest and the session rules store the same fields.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils.dateparse import parse_datetime

from ..core import formats
from ..models import SourceFile, Step, Trajectory
from ..store import DbBlobs


def path_text(path: Path) -> str:
    """The path as storable text: bytes of a name that are not UTF-8 become ``\\xNN``.

    A file name is bytes; Python carries the undecodable ones as lone surrogates, which no
    database driver or page can encode.
    """
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def message_text(message: Any) -> str:
    """ATIF messages are a string or a list of content parts; images become a marker."""
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    parts = []
    for part in message:
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append(part.get("text") or "")
        elif isinstance(part, dict):
            parts.append(f"[{part.get('type', 'part')}]")
    return "\n".join(parts)


def parse_when(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parse_datetime(value.replace("Z", "+00:00"))
    except ValueError:
        return None


@transaction.atomic
def trajectory_store(
    *,
    path: Path,
    data: bytes,
    sha: str,
    loaded: formats.Loaded,
    scanned: bool = False,
    findings: list[dict[str, Any]] | None = None,
    blocked: bool = False,
) -> Trajectory:
    meta = loaded.meta
    atif = loaded.atif
    # A blob's key is its digest: one bulk INSERT that ignores rows already there stores all
    # three, where looking each up first took three round trips more per file.
    blobs = DbBlobs()
    raw_sha = blobs.put(data)
    atif_sha = blobs.put(json.dumps(atif, separators=(",", ":")).encode())
    side_sha = (
        blobs.put(json.dumps(loaded.side_data, separators=(",", ":")).encode())
        if loaded.side_data
        else None
    )
    blobs.flush()
    source = SourceFile.objects.create(
        sha256=sha, path=path_text(path), format=loaded.format, size=len(data), raw_id=raw_sha
    )
    trajectory = Trajectory.objects.create(
        source=source,
        format=loaded.format,
        schema_version=str(atif.get("schema_version", "")),
        agent_name=(meta.agent_name or "")[:100],
        agent_version=(meta.agent_version or "")[:100],
        model_name=(meta.model_name or "")[:200],
        session_id=(meta.session_id or "")[:200],
        parent_session_id=(meta.parent_session_id or "")[:200],
        is_subagent=meta.is_subagent,
        title=(meta.title or "")[:300],
        cwd=meta.cwd or "",
        started_at=parse_when(meta.started_at),
        steps_count=meta.steps,
        prompt_tokens=meta.prompt_tokens,
        completion_tokens=meta.completion_tokens,
        cost_usd=meta.cost_usd,
        scanned=scanned,
        scan_findings=findings or [],
        blocked=blocked,
        partial=loaded.partial,
        harbor_task=(meta.harbor_task or "")[:300],
        harbor_reward=meta.harbor_reward,
        atif_id=atif_sha,
        side_data_id=side_sha,
    )
    _steps_insert(trajectory.id, atif.get("steps") or [])
    return trajectory


_STEP_COLUMNS = (
    "trajectory",
    "index",
    "step_id",
    "source",
    "timestamp",
    "model_name",
    "message",
    "reasoning",
    "tool_calls",
    "observations",
    "is_copied_context",
)


def _steps_insert(trajectory_id: int, steps: list[dict[str, Any]]) -> None:
    """Insert one row per ATIF step with a single executemany.

    bulk_create spends most of a 20,000-step ingest building SQL per row. Integers, text and
    booleans go to the driver as they are (every backend adapts them natively); only the two
    JSON columns need their field's preparation, which differs by backend.
    """
    fields = [Step._meta.get_field(name) for name in _STEP_COLUMNS]
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(Step._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))})"
    )
    json_prep = Step._meta.get_field("tool_calls").get_db_prep_save

    def row(i: int, step: dict[str, Any]) -> tuple[Any, ...]:
        return (
            trajectory_id,
            i,
            int(step.get("step_id") or i + 1),
            str(step.get("source", ""))[:10],
            str(step.get("timestamp") or "")[:40],
            str(step.get("model_name") or "")[:200],
            message_text(step.get("message")),
            step.get("reasoning_content") or "",
            json_prep(step.get("tool_calls") or [], connection),
            json_prep((step.get("observation") or {}).get("results") or [], connection),
            bool(step.get("is_copied_context")),
        )

    with connection.cursor() as cursor:
        for start in range(0, len(steps), 2000):
            cursor.executemany(
                sql, [row(i, s) for i, s in enumerate(steps[start : start + 2000], start)]
            )
