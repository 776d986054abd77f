"""An authored task's page: its status (polled while its trial matrix runs), every trial with
its reward, why and logs, the instruction, and verifying again one Docker failed under.
Importing one is on its behaviour's page (``behaviours.behaviour_authored_import``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from groundwork.access.errors import NotFound, Refused
from project.htmx import render_fragment, render_page, wants_fragment

from .. import tasks
from ..selectors import authored as reads
from ..services.authored import authored_task_retry as retry
from .access import can_import, can_view

ROW = "training/partials/authored_task.html"


@can_view
@require_GET
def authored_task_detail(request: HttpRequest, pk: int) -> HttpResponse:
    row = reads.authored_task(pk)
    if row is None:
        raise Http404("No such authored task.")
    line = reads.matrix_line(row)
    if wants_fragment(request, target=f"authored-task-{row.pk}"):
        response = render_fragment(
            request, ROW, {"row": row, "line": line}, stop_polling=row.finished
        )
        if row.finished:  # its trials (and, on the behaviour's page, its split) load once
            response["HX-Refresh"] = "true"
        return response
    context = {"row": row, "line": line, "trials": reads.trial_rows(row)}
    return render_page(request, "training/authored/detail.html", context)


@can_import
@require_POST
def authored_task_retry(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        row = retry(user=request.user, task_id=pk)
    except NotFound:
        raise Http404("No such authored task.") from None
    except Refused as error:
        messages.error(request, str(error))
        return redirect("training:authored_task", pk=pk)
    tasks.authored_task_enqueue(row.pk)
    messages.success(request, f"Authored task {row.pk} is queued for its trial matrix again.")
    return redirect("training:authored_task", pk=row.pk)
