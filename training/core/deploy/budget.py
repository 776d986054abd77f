"""Budget caps per deployment and UTC day: usage reports accumulate, and one of them trips the cap.

>>> cap = BudgetCap(tokens_per_day=1_000_000, money_per_day=Decimal("25.00"))
>>> at = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)
>>> first = record_usage(cap, None, UsageReport(at=at, tokens=999_000, money=Decimal("3.10")))
>>> first.tripped, first.usage.tokens
(False, 999000)
>>> second = record_usage(cap, first.usage, UsageReport(at=at, tokens=1_000))
>>> second.tripped, second.reason
(True, 'tokens: 1,000,000 used of 1,000,000 per day (2026-11-29 UTC)')
>>> record_usage(cap, second.usage, UsageReport(at=at, tokens=5)).tripped  # tripped once only
False

A cap is the most one UTC day may use: the report that brings usage to the cap or past it trips
it (``tripped``, once per day), and the service kills the deployment with ``reason`` as the
audit event's words. Days are UTC whatever the reporter's offset, so two serving hosts in
different time zones add to the same day. A late report for an earlier day adds to that day and
can trip that day's cap: the spending happened, and the kill is the safe answer.
Money is ``Decimal`` (binary floats do not add cents exactly); a float is refused. A day holds at
most ``TOKENS_MAX`` tokens and ``MONEY_MAX``: a report or a sum past them is refused
rather than overflowing the columns that keep the day.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal

ZERO = Decimal(0)
# What the day's row can hold anywhere: a signed 64-bit count, and a decimal of 16 digits with 6
# places (DeploymentUsage, Deployment's caps). Past them SQLite raises OverflowError and
# PostgreSQL "numeric field overflow": both 500s, so the numbers are refused here.
TOKENS_MAX = 2**63 - 1
MONEY_PLACES = 6
MONEY_MAX = Decimal(10) ** (16 - MONEY_PLACES) - Decimal(1).scaleb(-MONEY_PLACES)


class BudgetError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class BudgetCap:
    tokens_per_day: int | None = None
    money_per_day: Decimal | None = None  # in the serving bill's currency

    def __post_init__(self) -> None:
        if self.tokens_per_day is None and self.money_per_day is None:
            raise BudgetError("a budget cap needs tokens per day, money per day, or both")
        if self.tokens_per_day is not None:
            _count(self.tokens_per_day, "tokens_per_day")
            if self.tokens_per_day == 0:
                raise BudgetError("tokens_per_day must be positive (no deployment is simpler)")
        if self.money_per_day is not None:
            _money(self.money_per_day, "money_per_day")
            if self.money_per_day == 0:
                raise BudgetError("money_per_day must be positive (no deployment is simpler)")


@dataclass(frozen=True, slots=True)
class UsageReport:
    at: datetime  # timezone-aware
    tokens: int = 0
    money: Decimal = ZERO

    def __post_init__(self) -> None:
        utc_day(self.at)
        _count(self.tokens, "tokens")
        _money(self.money, "money")


@dataclass(frozen=True, slots=True)
class DayUsage:
    day: date  # UTC
    tokens: int = 0
    money: Decimal = ZERO


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    usage: DayUsage  # the day's usage including this report
    exceeded: bool  # the day's cap is used up
    tripped: bool  # this report is the one that used it up
    reason: str  # which limit, in words for the audit event ("" while within the cap)


def utc_day(at: datetime) -> date:
    if at.tzinfo is None or at.utcoffset() is None:
        raise BudgetError(f"usage times must carry a timezone, not naive {at.isoformat()}")
    try:
        return at.astimezone(UTC).date()
    except OverflowError:  # 9999-12-31 at -23:59 is a day in year 10000
        raise BudgetError(f"{at.isoformat()} falls outside the calendar in UTC") from None


def record_usage(cap: BudgetCap, usage: DayUsage | None, report: UsageReport) -> BudgetCheck:
    """Add ``report`` to ``usage``, the deployment's usage so far on the report's UTC day (None
    when it has none yet), and say whether this report trips the cap."""
    before = usage if usage is not None else DayUsage(utc_day(report.at))
    after = add_usage(before, report)
    reason = over_cap(cap, after)
    return BudgetCheck(
        usage=after,
        exceeded=bool(reason),
        tripped=bool(reason) and not over_cap(cap, before),
        reason=reason,
    )


def add_usage(usage: DayUsage, report: UsageReport) -> DayUsage:
    """The day's usage with ``report`` added; a sum past what a day holds is refused."""
    day = utc_day(report.at)
    if usage.day != day:
        raise BudgetError(f"a report of {day} UTC cannot add to the usage of {usage.day}")
    after = replace(usage, tokens=usage.tokens + report.tokens, money=usage.money + report.money)
    _count(after.tokens, f"the day's tokens ({usage.tokens:,} before this report)")
    _money(after.money, f"the day's money ({usage.money} before this report)")
    return after


def over_cap(cap: BudgetCap, usage: DayUsage) -> str:
    """Which limits the day's usage has reached, in words; "" while within the cap."""
    reached = []
    if cap.tokens_per_day is not None and usage.tokens >= cap.tokens_per_day:
        reached.append(f"tokens: {usage.tokens:,} used of {cap.tokens_per_day:,} per day")
    if cap.money_per_day is not None and usage.money >= cap.money_per_day:
        reached.append(f"money: {usage.money} spent of {cap.money_per_day} per day")
    return f"{'; '.join(reached)} ({usage.day.isoformat()} UTC)" if reached else ""


def _count(value: int, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BudgetError(f"{name} must be a non-negative integer, not {value!r}")
    if value > TOKENS_MAX:
        raise BudgetError(f"{name} must be at most {TOKENS_MAX:,}, not {value:,}")


def _money(value: Decimal, name: str) -> None:
    if not isinstance(value, Decimal | int) or isinstance(value, bool):
        raise BudgetError(f"{name} must be a Decimal, not {type(value).__name__} {value!r}")
    if not Decimal(value).is_finite() or value < 0:
        raise BudgetError(f"{name} must be a finite amount of at least 0, not {value}")
    if value > MONEY_MAX:
        raise BudgetError(f"{name} must be at most {MONEY_MAX}, not {value}")
