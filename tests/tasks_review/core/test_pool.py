"""The one worker pool: bounded threads, isolated failures, and a cancel that starts nothing new,
ends the work in flight and waits for it."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from tasks_review.core.pool import PoolOutcome, run_each

WAIT = 10.0  # seconds a blocked item waits before giving up, so a broken pool fails, not hangs


class Stop(Exception):
    """What a caller's on_done raises when its run was cancelled."""


class Ledger:
    """Which items started, which are running now, and the most that ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: list[int] = []
        self.running: set[int] = set()
        self.most = 0

    def enter(self, item: int) -> int:
        """How many items have started, this one included (one caller sees each count)."""
        with self.lock:
            self.started.append(item)
            self.running.add(item)
            self.most = max(self.most, len(self.running))
            return len(self.started)

    def leave(self, item: int) -> None:
        with self.lock:
            self.running.discard(item)


def test_outcomes_come_back_in_item_order_at_most_jobs_at_a_time():
    ledger = Ledger()

    def square(item: int, stop: threading.Event) -> int:
        ledger.enter(item)
        time.sleep(0.02 * (5 - item))  # later items finish first
        ledger.leave(item)
        return item * item

    outcomes = run_each(range(5), square, jobs=2)
    assert [o.item for o in outcomes] == [0, 1, 2, 3, 4]
    assert [o.result() for o in outcomes] == [0, 1, 4, 9, 16]
    assert ledger.most == 2


def test_an_item_that_raises_does_not_lose_the_others():
    done: list[PoolOutcome[int, int]] = []

    def work(item: int, stop: threading.Event) -> int:
        if item == 1:
            raise ValueError("bug in item 1")
        return item

    outcomes = run_each(range(4), work, jobs=2, on_done=done.append)
    assert [o.value for o in outcomes] == [0, None, 2, 3]
    assert isinstance(outcomes[1].error, ValueError)
    with pytest.raises(ValueError, match="bug in item 1"):
        outcomes[1].result()
    assert sorted(o.item for o in done) == [0, 1, 2, 3]  # on_done saw the failure too


def test_one_items_stop_event_is_not_its_siblings():
    # A trial matrix sets its own stop event when it fails; the other matrices must go on.
    seen: dict[int, bool] = {}

    def work(item: int, stop: threading.Event) -> int:
        if item == 0:
            stop.set()
            raise RuntimeError("failed and stopped itself")
        time.sleep(0.05)
        seen[item] = stop.is_set()
        return item

    outcomes = run_each(range(3), work, jobs=3)
    assert seen == {1: False, 2: False}
    assert [o.value for o in outcomes] == [None, 1, 2]


def test_a_cancel_starts_no_new_item_stops_those_running_and_waits_for_them():
    ledger = Ledger()
    cancels: list[set[int]] = []

    def work(item: int, stop: threading.Event) -> str:
        ledger.enter(item)
        try:
            if item == 0:
                return "quick"
            return "stopped" if stop.wait(WAIT) else "never stopped"
        finally:
            ledger.leave(item)

    def on_done(outcome: PoolOutcome[int, str]) -> None:
        raise Stop("the run was cancelled")

    with pytest.raises(Stop):
        run_each(
            range(6),
            work,
            jobs=2,
            on_done=on_done,
            on_cancel=lambda: cancels.append(set(ledger.running)),
        )
    # Item 0 finished first; at most one more item had been picked up before the cancel.
    assert 0 in ledger.started and set(ledger.started) <= {0, 1, 2}
    assert len(cancels) == 1 and 1 in cancels[0]  # called while the work was in flight
    assert ledger.running == set()  # the pool waited for it before raising


def test_on_cancel_ends_work_that_only_it_can_reach():
    # Worker threads get no interrupt: a trial blocked on its container ends when the
    # container is killed, which is what the callers' on_cancel does.
    killed = threading.Event()
    blocked = threading.Event()
    ended: list[str] = []

    def work(item: int, stop: threading.Event) -> None:
        if item == 0:
            blocked.wait(WAIT)  # finish (and so cancel) only once item 1 is in flight
            return
        blocked.set()
        ended.append("killed" if killed.wait(WAIT) else "ran to its end")

    started = time.monotonic()
    with pytest.raises(Stop):
        run_each(range(2), work, jobs=2, on_done=_raise_stop, on_cancel=killed.set)
    assert ended == ["killed"] and time.monotonic() - started < WAIT / 2


def _raise_stop(outcome: object) -> None:
    raise Stop()


def test_a_failing_on_cancel_does_not_hide_why_the_pool_stopped():
    def broken_cleanup() -> None:
        raise OSError("docker is gone")

    with pytest.raises(Stop):
        run_each(
            range(2), lambda item, stop: item, jobs=1, on_done=_raise_stop, on_cancel=broken_cleanup
        )


def test_an_interrupt_while_waiting_cancels_and_is_raised_again(ctrl_c):
    main = threading.main_thread().ident
    assert main is not None and threading.get_ident() == main
    ledger = Ledger()
    cancels: list[int] = []

    def work(item: int, stop: threading.Event) -> bool:
        if ledger.enter(item) == 2:  # both lanes busy: one Ctrl-C
            # Once the main thread waits: CPython's executor starts a thread before it records
            # it, and an interrupt between the two leaves that thread out of shutdown's join.
            time.sleep(0.2)
            signal.pthread_kill(main, signal.SIGINT)
        stopped = stop.wait(WAIT)
        ledger.leave(item)
        return stopped

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_each(range(5), work, jobs=2, on_cancel=lambda: cancels.append(len(ledger.running)))
    assert time.monotonic() - started < WAIT / 2
    assert sorted(ledger.started) == [0, 1] and ledger.running == set()
    assert cancels == [2]
