"""A running job's pulse on its row, so a dead worker's row is known within minutes.

    with Heartbeat(EvalRun.objects.filter(pk=run.pk)):
        ...  # the work

``claim`` stamps ``heartbeat_at`` when it takes a row; inside the block a background thread
stamps it again every ``TRAJ2ENV_HEARTBEAT_SECONDS``, and stops when the block ends, however it
ends. A running row whose stamp is older than ``STALE_BEATS`` beats belongs to a process that
died (``dead_before``): ``claim`` takes it over.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import QuerySet
from django.utils import timezone

log = logging.getLogger(__name__)

FIELD = "heartbeat_at"
STALE_BEATS = 4


def beat_seconds() -> float:
    return float(settings.TRAJ2ENV["HEARTBEAT_SECONDS"])


def dead_before() -> datetime:
    """A running row whose heartbeat is older than this has lost its process."""
    return timezone.now() - timedelta(seconds=STALE_BEATS * beat_seconds())


class Heartbeat:
    """Stamp ``field`` of ``rows`` with now every ``every`` seconds while the block runs."""

    def __init__(
        self, rows: QuerySet[Any], *, field: str = FIELD, every: float | None = None
    ) -> None:
        self.rows = rows
        self.field = field
        self.every = beat_seconds() if every is None else every
        self.beats = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.every):
                try:
                    self.rows.update(**{self.field: timezone.now()})
                    self.beats += 1
                except Exception:  # a missed beat is retried; it must never end the work
                    log.warning("heartbeat of %s missed", self.rows.model.__name__, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connection
