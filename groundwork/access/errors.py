"""What a service refuses, as one family of typed errors, and the role check every service makes
first. Each kind answers one way wherever it is raised: who (403), which (404), when (409), what
(422) over HTTP (``status_of``); who and when are refusals, which and what usage errors, on the
command line (``exit_code_of``).

>>> status_of(NotPermitted("bob may not approve")), status_of(Held("candidate 4 is held"))
(403, 409)
>>> exit_code_of(Conflict("the run is finished")), exit_code_of(Invalid("choose A, B or tie"))
(1, 2)
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied

# What a command exits with when a service refuses it (0 is done).
EXIT_REFUSED, EXIT_USAGE = 1, 2


class Refused(Exception):
    """An action a service refuses; the message says why, for the person who tried."""


class NotPermitted(Refused, PermissionDenied):
    """The user's role does not allow this action (Django answers 403 wherever it is raised)."""


class NotFound(Refused):
    """The row the action names does not exist: 404."""


class Conflict(Refused):
    """The row is not in a state that allows this action (decided already, a job running): 409."""


class Held(Conflict):
    """Someone else holds the row (``groundwork.services.holds``)."""


class NotHeld(Conflict):
    """The row is not held, so there is no hold to give back."""


class Invalid(Refused):
    """Input that does not make sense (a decision without its reason, a spec the schema refuses):
    422. ``fields``: why each form field at fault is refused, for a form to show them at once."""

    def __init__(self, message: str, *, fields: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.fields = fields or {}


def require(user: AbstractBaseUser, perm: str, action: str) -> None:
    """Views check roles too; a script or a worker calling a service must not slip past."""
    if not user.is_authenticated or not user.has_perm(perm):
        raise NotPermitted(f"{user.get_username() or 'anonymous'} may not {action}")


def status_of(error: Exception) -> int:
    """The HTTP answer to a refused action: 403 for who, 404 for which, 409 for when, 422 for
    what."""
    if isinstance(error, NotPermitted):
        return 403
    if isinstance(error, NotFound):
        return 404
    return 409 if isinstance(error, Conflict) else 422


def exit_code_of(error: Exception) -> int:
    """A command's exit code for a refused action: who and when are refusals (1), which and what
    are usage errors (2)."""
    return EXIT_REFUSED if isinstance(error, (NotPermitted, Conflict)) else EXIT_USAGE
