"""The one fake Docker engine for tests that need the seam without a daemon.

It records the labelled cleanups a service asks for (``cleanups``: label and ``include_live``) and
sets ``removed`` on each, so a test can stand for a trial that ends when its run's containers go.
"""

from __future__ import annotations

import threading


class FakeEngine:
    """The Docker seam's labelled cleanup, recorded; removing containers sets ``removed``."""

    def __init__(self) -> None:
        self.cleanups: list[tuple[str, bool]] = []
        self.removed = threading.Event()

    def cleanup(self, *, label: str, include_live: bool = False) -> None:
        self.cleanups.append((label, include_live))
        self.removed.set()
