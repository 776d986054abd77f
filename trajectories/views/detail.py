from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from ..models import Trajectory
from . import can_review


@can_review
def trajectory_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trajectory = get_object_or_404(Trajectory.objects.select_related("source", "parent"), pk=pk)
    return render(
        request,
        "trajectories/detail.html",
        {
            "trajectory": trajectory,
            "subagents": trajectory.subagents.order_by("id"),
        },
    )
