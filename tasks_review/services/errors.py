"""What the review desk's services refuse, as typed errors the views map to 403, 409 and 422, and
the role check every one of those services makes first."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied


class ReviewError(Exception):
    """An action the review desk refuses; the message says why, for the person who tried."""


class NotPermitted(ReviewError, PermissionDenied):
    """The user's role does not allow this action (Django answers 403)."""


class InvalidDecision(ReviewError):
    """A decision, reason or comment that does not make sense together."""


class NotReviewable(ReviewError):
    """The candidate is not (or no longer) open for this action."""


class AlreadyReviewed(ReviewError):
    pass


class Reserved(ReviewError):
    """Someone else holds the candidate."""


class NotReserved(ReviewError):
    pass


class ExportRefused(ReviewError):
    pass


class InvalidSetting(ReviewError):
    """A desk setting that does not exist, or a value outside its bounds (422)."""


def require(user: AbstractBaseUser, perm: str, action: str) -> None:
    """Views check roles too; a script or a worker calling a service must not slip past."""
    if not user.is_authenticated or not user.has_perm(perm):
        raise NotPermitted(f"{user.get_username() or 'anonymous'} may not {action}")
