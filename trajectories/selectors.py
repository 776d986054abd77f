"""Reads that are more than a filter."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

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
