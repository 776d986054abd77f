"""The fake Docker engines for tests that need the seam without a daemon.

``FakeEngine`` records the labelled cleanups a service asks for (``cleanups``: label and
``include_live``) and sets ``removed`` on each, so a test can stand for a trial that ends when its
run's containers go. ``NoEngine`` is the seam where a test expects no call at all.
"""

from __future__ import annotations

import threading
from typing import NoReturn


class FakeEngine:
    """The Docker seam's labelled cleanup, recorded; removing containers sets ``removed``."""

    def __init__(self) -> None:
        self.cleanups: list[tuple[str, bool]] = []
        self.removed = threading.Event()

    def cleanup(self, *, label: str, include_live: bool = False) -> None:
        self.cleanups.append((label, include_live))
        self.removed.set()


class NoEngine:
    """The Docker seam, never to be reached (a file refused before it is loaded, a task dropped
    before its image is built): any use fails the test, naming what was called."""

    def __getattr__(self, name: str) -> NoReturn:
        raise AssertionError(f"the code under test should not have called Engine.{name}")
