"""`{{ value|moment }}`: a datetime or an ISO 8601 string (an ATIF step's timestamp) shown to
the second, with no microseconds (`display.moment`)."""

from __future__ import annotations

from typing import Any

from django import template

from ..display import moment as shown_moment

register = template.Library()


@register.filter
def moment(value: Any) -> Any:
    return shown_moment(value)
