"""`{{ value|redacted }}`: a row's text shown straight from a template, secrets replaced by the
display helpers' one redactor (`display.shown_text`). Apply it before any cut (`truncatechars`),
so a secret is recognised whole."""

from __future__ import annotations

from typing import Any

from django import template

from ..display import shown_text

register = template.Library()


@register.filter
def redacted(value: Any) -> str:
    return shown_text("" if value is None else str(value)).value
