from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from .models import Trajectory
from .selectors import TrajectoryFilters, trajectory_facets, trajectory_search

PAGE_SIZE = 50
can_review = permission_required("trajectories.review_trajectory", raise_exception=True)


@can_review
def trajectory_list(request: HttpRequest) -> HttpResponse:
    filters = TrajectoryFilters.from_query(request.GET)
    page = Paginator(trajectory_search(filters), PAGE_SIZE).get_page(request.GET.get("page"))
    template = "trajectories/list.html"
    if request.htmx and request.htmx.target == "trajectory-results":
        template += "#results"
    querystring = request.GET.copy()
    querystring.pop("page", None)
    return render(
        request,
        template,
        {
            "page": page,
            "filters": filters,
            "facets": trajectory_facets(),
            "formats": Trajectory.Format.choices,
            "statuses": Trajectory.Status.choices,
            "querystring": querystring.urlencode(),
        },
    )


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
