"""Desk settings: an admin changes a number of the desk in the app; it counts from the next
request on, with no restart, and the change is audited (``desk_setting.change``).

``desk_setting_change`` is the one write; each floor wraps it with what a new number means for
the rows already there, in the same transaction: fewer reviews per candidate settle the
candidates that have enough (``reviews_per_candidate_set``), fewer labels per pair complete
the pairs that do (``training.services.labels.labels_per_pair_set``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from groundwork.access.errors import Invalid, require
from groundwork.services.audit import audit_event_record

from ..models import DeskSetting
from ..roles import CHANGE_SETTINGS
from ..selectors import desk_settings
from .reviews import candidates_settle

SET = "set in the app"
ENVIRONMENT = "environment"


def _whole(key: str, value: Any) -> int:
    low, high = desk_settings.BOUNDS[key]
    try:
        number = int(str(value).strip())
    except ValueError:
        number = None
    if number is None or not low <= number <= high:
        label = DeskSetting.Key(key).label.lower()
        raise Invalid(f"{label} must be a whole number from {low} to {high}")
    return number


def desk_setting_change(*, user: AbstractBaseUser, key: str, value: Any) -> DeskSetting:
    """Set ``key`` to ``value`` for everyone from now on."""
    require(user, CHANGE_SETTINGS, "change the desk's settings")
    if key not in DeskSetting.Key.values:
        raise Invalid(f"there is no setting {key[:40]!r}")
    number = _whole(key, value)
    with transaction.atomic():
        row = DeskSetting.objects.select_for_update().filter(key=key).first()
        before = {
            "key": key,
            "value": desk_settings.default(key) if row is None else row.value,
            "source": ENVIRONMENT if row is None else SET,
        }
        if row is None:
            row = DeskSetting(key=key)
        row.value, row.changed_by = number, user
        row.save()
        audit_event_record(
            actor=user,
            verb="desk_setting.change",
            target=row,
            before=before,
            after={"key": key, "value": number, "source": SET},
        )
        return row


def reviews_per_candidate_set(*, user: AbstractBaseUser, value: Any) -> DeskSetting:
    """Change how many reviews a candidate needs; a lower number settles at once the pending
    candidates that already have that many (agreed: decided; not: disputed)."""
    with transaction.atomic():
        row = desk_setting_change(user=user, key=DeskSetting.Key.REVIEWS_PER_CANDIDATE, value=value)
        candidates_settle(user=user, needed=row.value)
        return row
