"""What the training floor's services refuse, as typed errors the views map to 403, 409 and 422.

The role check is the review desk's (`tasks_review.services.errors.require`): one rule, one place.
"""

from __future__ import annotations

from tasks_review.services.errors import NotPermitted, require

__all__ = ["Conflict", "Invalid", "NotFound", "NotPermitted", "TrainingError", "require"]


class TrainingError(Exception):
    """An action the training floor refuses; the message says why, for the person who tried."""


class Invalid(TrainingError):
    """Input that does not make sense (a spec the schema refuses, a task that is not kept): 422.
    ``fields``: why each form field at fault is refused, for a form to show them all at once."""

    def __init__(self, message: str, *, fields: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.fields = fields or {}


class Conflict(TrainingError):
    """The row is not in a state that allows this action (a job already running): 409."""


class NotFound(TrainingError):
    """The row the action names does not exist: 404."""
