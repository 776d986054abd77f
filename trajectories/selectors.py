"""Reads that are more than a filter."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from .core.blobs import BlobStore
from .core.replay import ReplayResult, Subagent, replay, spawned
from .models import Trajectory


@dataclass(frozen=True)
class TrajectoryFilters:
    q: str = ""
    format: str = ""
    agent: str = ""
    model: str = ""
    status: str = ""
    blocked: str = ""  # "", "yes", "no"

    @classmethod
    def from_query(cls, params) -> TrajectoryFilters:
        def get(name: str) -> str:
            return (params.get(name) or "").strip()[:200]

        blocked = get("blocked")
        return cls(
            q=get("q"),
            format=get("format") if get("format") in Trajectory.Format.values else "",
            agent=get("agent"),
            model=get("model"),
            status=get("status") if get("status") in Trajectory.Status.values else "",
            blocked=blocked if blocked in {"yes", "no"} else "",
        )

    def active(self) -> bool:
        return any((self.q, self.format, self.agent, self.model, self.status, self.blocked))


def trajectory_search(filters: TrajectoryFilters) -> QuerySet[Trajectory]:
    qs = Trajectory.objects.select_related("source").defer("source__path", "cwd", "scan_findings")
    if filters.format:
        qs = qs.filter(format=filters.format)
    if filters.agent:
        qs = qs.filter(agent_name=filters.agent)
    if filters.model:
        qs = qs.filter(model_name=filters.model)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.blocked:
        qs = qs.filter(blocked=filters.blocked == "yes")
    if filters.q:
        qs = qs.filter(
            Q(title__icontains=filters.q)
            | Q(session_id__icontains=filters.q)
            | Q(model_name__icontains=filters.q)
            | Q(harbor_task__icontains=filters.q)
        )
    return qs.order_by("-id")


def trajectory_facets() -> dict[str, list[str]]:
    """Distinct agents and models for the filter menus (small sets, indexed columns)."""
    agents = Trajectory.objects.order_by().values_list("agent_name", flat=True).distinct()
    models = Trajectory.objects.order_by().values_list("model_name", flat=True).distinct()
    return {
        "agents": sorted(a for a in agents if a),
        "models": sorted(m for m in models if m),
    }


@dataclass(frozen=True)
class ReplayInputs:
    atif: dict[str, Any]
    side_data: dict[str, Any]
    root: str | None
    subagents: dict[str, Subagent]  # the recording of each subagent a call spawned, by call id

    def replay(self, blobs: BlobStore, seed: Mapping[str, str] | None = None) -> ReplayResult:
        """``seed``: the project's known starting files (see ``core.replay.replay``)."""
        return replay(
            self.atif,
            self.side_data,
            root=self.root,
            blobs=blobs,
            subagents=self.subagents,
            seed=seed,
        )


def replay_inputs(trajectory: Trajectory) -> ReplayInputs:
    """What replaying ``trajectory`` reads: its ATIF, its side data, its subagents' recordings."""
    atif, side = _documents(trajectory)
    subagents = subagent_recordings(trajectory, atif, side)
    return ReplayInputs(atif, side, trajectory.cwd or None, subagents)


def subagent_recordings(
    trajectory: Trajectory, atif: dict[str, Any], side: dict[str, Any]
) -> dict[str, Subagent]:
    """The stored subagent sessions ``trajectory``'s calls spawned, by spawning call.

    A subagent is found whether or not ``subagents_link`` has pointed it at its parent yet:
    a subagent log names its parent's session. A spawned session not stored, or stored with
    lines lost (``partial``: an edit may be among them), gives no entry, and replay keeps that
    call's old meaning (the tree after it is uncertain).
    """
    names = spawned(atif, side)
    if not names:
        return {}
    scope = Q(parent=trajectory)
    if trajectory.session_id:
        scope |= Q(is_subagent=True, parent_session_id=trajectory.session_id)
    children = (
        Trajectory.objects.filter(scope, session_id__in=set(names.values()), partial=False)
        .exclude(id=trajectory.id)
        .select_related("atif", "side_data")
        .order_by("id")
    )
    chosen: dict[str, Trajectory] = {}
    for child in children:
        kept = chosen.get(child.session_id)
        # A Harbor ATIF export of the same subagent shares its id; the raw log of the parent's
        # own format carries the side data that makes edits exact.
        if kept is None or (kept.format != trajectory.format and child.format == trajectory.format):
            chosen[child.session_id] = child
    return {
        call_id: Subagent(name, *_documents(chosen[name]))
        for call_id, name in names.items()
        if name in chosen
    }


def _documents(trajectory: Trajectory) -> tuple[dict[str, Any], dict[str, Any]]:
    atif = json.loads(trajectory.atif.content())
    side = json.loads(trajectory.side_data.content()) if trajectory.side_data else {}
    return atif, side
