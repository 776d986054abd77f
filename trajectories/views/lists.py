from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse

from project.htmx import render_page

from ..models import Trajectory
from ..selectors import TrajectoryFilters, trajectory_facets, trajectory_search
from . import can_review

PAGE_SIZE = 50


@can_review
def trajectory_list(request: HttpRequest) -> HttpResponse:
    filters = TrajectoryFilters.from_query(request.GET)
    page = Paginator(trajectory_search(filters), PAGE_SIZE).get_page(request.GET.get("page"))
    querystring = request.GET.copy()
    querystring.pop("page", None)
    return render_page(
        request,
        "trajectories/list.html",
        {
            "page": page,
            "filters": filters,
            "facets": trajectory_facets(),
            "formats": Trajectory.Format.choices,
            "statuses": Trajectory.Status.choices,
            "querystring": querystring.urlencode(),
        },
        "results",
        target="trajectory-results",
    )
