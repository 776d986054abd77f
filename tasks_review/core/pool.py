"""One worker pool for independent items that wait on something else (Docker): several
candidates' trial matrices, from the generate command or the benchmark.

    outcomes = run_each(
        candidates, verify, jobs=2, on_done=tick, on_cancel=kill_this_runs_containers
    )
    values = [outcome.result() for outcome in outcomes]  # raises an item's own exception

``work(item, stop)`` runs ``jobs`` items at a time in threads. An item that raises does not stop
the others: its ``PoolOutcome`` keeps the exception. ``on_done`` sees each outcome in the calling
thread as it completes. When that thread is interrupted (KeyboardInterrupt, or ``on_done``
raising: the run was cancelled from its page) the pool cancels: no further item starts, every
running item's ``stop`` event is set, ``on_cancel`` runs once (threads get no interrupt, so it
ends the work in flight, e.g. by killing this run's containers), the pool waits for the running
items to return, and the interruption is raised again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass

log = logging.getLogger(__name__)


class NotStarted(Exception):
    """The pool was cancelled before this item started."""


@dataclass(frozen=True, slots=True)
class PoolOutcome[T, R]:
    item: T
    value: R | None = None
    error: Exception | None = None

    def result(self) -> R:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # work returned it, None included


def run_each[T, R](
    items: Iterable[T],
    work: Callable[[T, threading.Event], R],
    *,
    jobs: int,
    on_done: Callable[[PoolOutcome[T, R]], None] | None = None,
    on_cancel: Callable[[], None] | None = None,
    name: str = "pool",
) -> list[PoolOutcome[T, R]]:
    """Every item's outcome, in the order of ``items``."""
    todo = list(items)
    # One event per item: a matrix that stops itself on its own error must not stop its siblings.
    stops = [threading.Event() for _ in todo]
    cancelled = threading.Event()

    def one(index: int) -> PoolOutcome[T, R]:
        item = todo[index]
        if cancelled.is_set():
            return PoolOutcome(item, error=NotStarted(f"cancelled before {item!r} started"))
        try:
            return PoolOutcome(item, value=work(item, stops[index]))
        except Exception as exc:
            log.exception("%s: %r failed; the other items go on", name, item)
            return PoolOutcome(item, error=exc)

    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix=name)
    futures: list[Future[PoolOutcome[T, R]]] = []
    try:
        # Submitting inside the try: an interrupt may land while the first items already run.
        futures += (pool.submit(one, index) for index in range(len(todo)))
        for future in as_completed(futures):
            if on_done is not None:
                on_done(future.result())
    except BaseException:
        cancelled.set()
        for future in futures:
            future.cancel()
        for stop in stops:
            stop.set()
        if on_cancel is not None:
            try:
                on_cancel()
            except Exception:  # what stopped the pool matters more than a failed clean-up
                log.exception("%s: cancelling the work in flight failed", name)
        raise
    finally:
        pool.shutdown(wait=True)
    return [future.result() for future in futures]
