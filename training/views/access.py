"""What every training page shares: the role each needs, and the status a refusal answers with.

The services check roles again (a script must not slip past); NotPermitted is Django's
PermissionDenied, so it answers 403 wherever it is raised.
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest

from ..roles import EDIT_BEHAVIOUR, IMPORT_SANDBOX, RUN_EVAL, VIEW
from ..services.errors import Conflict, NotFound, NotPermitted

can_view = permission_required(VIEW, raise_exception=True)
can_edit = permission_required(EDIT_BEHAVIOUR, raise_exception=True)
can_run = permission_required(RUN_EVAL, raise_exception=True)
can_import = permission_required(IMPORT_SANDBOX, raise_exception=True)


def status_of(error: Exception) -> int:
    """The answer to a refused action: 403 for who, 404 for which, 409 for when, 422 for what."""
    if isinstance(error, NotPermitted):
        return 403
    if isinstance(error, NotFound):
        return 404
    return 409 if isinstance(error, Conflict) else 422


def int_or_none(request: HttpRequest, name: str) -> int | None:
    """A whole number from the query string; None when absent or not a number."""
    raw = request.GET.get(name, "").strip()
    return int(raw) if raw.isdigit() else None
