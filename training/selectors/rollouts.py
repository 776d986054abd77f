"""Rollouts and their imports as the rollouts page shows them: filters, facets, skipped trials."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Q, QuerySet
from django.utils.http import urlencode

from tasks_review.models import Candidate

from ..models import Rollout, RolloutImport

IMPORTS_SHOWN = 10
GRADES = dict(Rollout.Grade.choices)


@dataclass(frozen=True, slots=True)
class RolloutFilters:
    task: str = ""  # a kept task's number or part of its name
    agent: str = ""
    grade: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> RolloutFilters:
        grade = query.get("grade", "")
        return cls(
            task=query.get("task", "").strip(),
            agent=query.get("agent", "").strip(),
            grade=grade if grade in GRADES else "",
        )

    @property
    def active(self) -> bool:
        return bool(self.task or self.agent or self.grade)

    def query(self) -> str:
        return urlencode({k: v for k, v in asdict(self).items() if v})


def rollout_search(filters: RolloutFilters) -> QuerySet[Rollout]:
    rows = Rollout.objects.select_related("candidate", "trajectory").order_by("-id")
    if filters.task:
        match = Q(candidate__task_name__icontains=filters.task)
        if filters.task.lstrip("#").isdigit():
            match |= Q(candidate_id=int(filters.task.lstrip("#")))
        rows = rows.filter(match)
    if filters.agent:
        rows = rows.filter(agent=filters.agent)
    if filters.grade:
        rows = rows.filter(grade=filters.grade)
    return rows


def rollout_facets() -> dict[str, Any]:
    return {
        "agents": list(
            Rollout.objects.order_by("agent").values_list("agent", flat=True).distinct()
        ),
        "tasks": list(
            Candidate.objects.filter(rollouts__isnull=False)
            .distinct()
            .order_by("task_name")
            .values_list("task_name", flat=True)
        ),
        "grades": list(GRADES.items()),
    }


def recent_imports() -> list[RolloutImport]:
    return list(RolloutImport.objects.select_related("created_by").order_by("-id")[:IMPORTS_SHOWN])
