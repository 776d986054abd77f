"""Sessions recorded in several files: a twin is kept as one more source of the trajectory
already stored (`core.sessions` says when two recordings are one session), and a subagent's
log is linked to its parent's session whatever order the two arrive in.
"""

from __future__ import annotations

from pathlib import Path

from ..core import formats, sessions
from ..models import SourceFile, Step, Trajectory
from ..store import DbBlobs
from .trajectories import message_text, parse_when, path_text


def _recording(loaded: formats.Loaded) -> sessions.Recording:
    steps = loaded.atif.get("steps") or []
    return sessions.Recording(
        session_id=(loaded.meta.session_id or "")[:200],
        first_request=sessions.first_request(
            (
                str(s.get("source", "")),
                message_text(s.get("message")),
                bool(s.get("is_copied_context")),
            )
            for s in steps
        ),
        started_at=parse_when(loaded.meta.started_at),
        is_subagent=loaded.meta.is_subagent,
    )


def stored_session(loaded: formats.Loaded, under: Path | None = None) -> Trajectory | None:
    """The stored trajectory of the session ``loaded`` records, if another file made one
    (a file first seen under ``under``, when given).

    Two workers ingesting a session's two files at once can each store a trajectory: the check
    and the insert are not one statement. A later ingest of either file then finds the first.
    """
    new = _recording(loaded)
    if not new.session_id:
        return None
    stored_rows = Trajectory.objects.filter(session_id=new.session_id)
    if under is not None:
        stored_rows = stored_rows.filter(source__path__startswith=path_text(under) + "/")
    for stored in stored_rows.order_by("id"):
        first = (
            Step.objects.filter(trajectory=stored, source="user", is_copied_context=False)
            .order_by("index")
            .values_list("message", flat=True)
            .first()
        )
        recorded = sessions.Recording(
            session_id=stored.session_id,
            first_request=first or "",
            started_at=stored.started_at,
            is_subagent=stored.is_subagent,
        )
        if sessions.same_session(recorded, new):
            return stored
    return None


def twin_source_store(
    *, path: Path, data: bytes, sha: str, fmt: str, twin_of: Trajectory
) -> SourceFile:
    """Keep ``data`` as another recording of ``twin_of``'s session, not a trajectory of its own."""
    blobs = DbBlobs()
    raw_sha = blobs.put(data)
    blobs.flush()
    return SourceFile.objects.create(
        sha256=sha,
        path=path_text(path),
        format=fmt,
        size=len(data),
        raw_id=raw_sha,
        twin_of=twin_of,
    )


def subagents_link() -> list[int]:
    """Point subagent logs at their parent session once both are stored, whatever the order.

    A parent already replayed without a subagent it now has is set back to ingested: its
    stored replay lacks the subagent's edits. Returns those parents' ids, to replay again.
    """
    S = Trajectory.Status
    stale: list[int] = []
    orphans = Trajectory.objects.filter(parent__isnull=True).exclude(parent_session_id="")
    for child in orphans.only("id", "parent_session_id", "format"):
        parents = list(
            Trajectory.objects.filter(session_id=child.parent_session_id, is_subagent=False)
            .exclude(id=child.id)
            .only("id", "format")
        )
        # A Harbor ATIF export of the same session shares its id; the raw log of the child's own
        # format is the better parent.
        best = next(
            (p for p in parents if p.format == child.format), parents[0] if parents else None
        )
        if best is not None:
            Trajectory.objects.filter(id=child.id).update(parent=best)
            # Conditional: a replay running now reads the subagent itself.
            done = Trajectory.objects.filter(id=best.id, status__in=(S.REPLAYED, S.REPLAY_FAILED))
            if done.update(status=S.INGESTED, replay_error=""):
                stale.append(best.id)
    return stale
