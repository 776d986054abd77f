"""What every training page shares: the role each needs, and a number from the query string.

The services check roles again (a script must not slip past); a refusal answers with its own
status (``groundwork.access.errors.status_of``).
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest

from ..roles import EDIT_BEHAVIOUR, IMPORT_AUTHORED, RUN_EVAL, VIEW

can_view = permission_required(VIEW, raise_exception=True)
can_edit = permission_required(EDIT_BEHAVIOUR, raise_exception=True)
can_run = permission_required(RUN_EVAL, raise_exception=True)
can_import = permission_required(IMPORT_AUTHORED, raise_exception=True)


def int_or_none(request: HttpRequest, name: str) -> int | None:
    """A whole number from the query string; None when absent or not a number."""
    raw = request.GET.get(name, "").strip()
    return int(raw) if raw.isdigit() else None
