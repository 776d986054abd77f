"""How a page answers what a training service refuses: the status code of each typed error.

NotPermitted is Django's PermissionDenied already (403) and is never caught here.
"""

from __future__ import annotations

from ..services.errors import Conflict, Invalid, NotFound, TrainingError

STATUS: dict[type[TrainingError], int] = {Invalid: 422, Conflict: 409, NotFound: 404}


def status_of(error: TrainingError) -> int:
    return next((code for kind, code in STATUS.items() if isinstance(error, kind)), 400)
