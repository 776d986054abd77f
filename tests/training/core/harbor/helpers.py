"""Running Harbor's coroutines from a test, whatever else the test worker runs.

A browser test earlier in the same xdist worker leaves Playwright's event loop running in the
main thread, where ``asyncio.run`` then refuses to start; a thread of its own has no loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_coroutine[T](coroutine: Coroutine[Any, Any, T]) -> T:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="harbor-test") as pool:
        return pool.submit(asyncio.run, coroutine).result()
