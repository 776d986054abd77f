"""The desk's numbers an admin changes in the app (the settings page), with the environment
variable as their default: reviews per candidate and labels per preference pair."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from ..models import DeskSetting

Key = DeskSetting.Key

# What the settings page accepts: more than ten reviewers per item is a typo, not a policy.
BOUNDS: dict[str, tuple[int, int]] = {
    Key.REVIEWS_PER_CANDIDATE: (1, 10),
    Key.LABELS_PER_PAIR: (1, 10),
}

HELP = {
    Key.REVIEWS_PER_CANDIDATE: "independent reviews a candidate needs before its decision stands "
    "(they must agree, or it is disputed)",
    Key.LABELS_PER_PAIR: "labellers' verdicts a preference pair needs before they are shown and "
    "count",
}


def default(key: str) -> int:
    """The environment variable's value (``TRAJ2ENV_<KEY>``), read at start."""
    return int(settings.TRAJ2ENV[key])


def value(key: str) -> int:
    """The number in force now: the one set in the app, else the environment's."""
    row = DeskSetting.objects.filter(key=key).values_list("value", flat=True).first()
    return default(key) if row is None else int(row)


@dataclass(frozen=True)
class Shown:
    key: str
    label: str
    help: str
    value: int
    default: int
    minimum: int
    maximum: int
    changed_by: str | None
    changed_at: datetime | None


def shown() -> list[Shown]:
    """Every setting as the settings page shows it: its value, its default, who set it when."""
    rows = {row.key: row for row in DeskSetting.objects.select_related("changed_by")}
    out = []
    for key, label in Key.choices:
        row = rows.get(key)
        low, high = BOUNDS[key]
        out.append(
            Shown(
                key=key,
                label=label,
                help=HELP[key],
                value=default(key) if row is None else row.value,
                default=default(key),
                minimum=low,
                maximum=high,
                changed_by=row.changed_by.get_username() if row and row.changed_by else None,
                changed_at=row.changed_at if row else None,
            )
        )
    return out
